"""Plan tiers and their limits (the table is ``config.TIER_LIMITS``).

Exceeding a limit raises TierLimitExceeded (403 tier_limit_exceeded). The API-key
quota is enforced by services/keys.py; copy configs call
``check_active_config_quota`` before activating one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import peewee

import config
from models import ApiKey, User
from models.base import db, utcnow
from services import errors

TIERS: tuple[str, ...] = tuple(config.TIER_LIMITS)


@dataclass(frozen=True)
class TierLimits:
    """What one tier allows."""

    tier: str
    max_active_configs: int
    max_api_keys: int


def limits_for(tier: str, table: Mapping[str, Mapping[str, int]] | None = None) -> TierLimits:
    """The limits of ``tier`` (unknown tiers get the free tier's)."""
    table = table or config.TIER_LIMITS
    row = table.get(tier) or table["free"]
    return TierLimits(tier=tier if tier in table else "free",
                      max_active_configs=int(row["max_active_configs"]),
                      max_api_keys=int(row["max_api_keys"]))


def _current_tier(user_id: UUID) -> str:
    """The user's tier as stored now (it may have changed since the request began).

    On PostgreSQL the row is locked too, serialising one user's quota checks
    (SQLite has a single writer anyway). Call inside a transaction.
    """
    query = User.select(User.tier).where(User.id == user_id)
    if isinstance(db.obj, peewee.PostgresqlDatabase):
        query = query.for_update()
    row = query.first()
    return row.tier if row is not None else "free"


def check_api_key_quota(user: User, *, now: datetime | None = None) -> None:
    """Raise TierLimitExceeded when ``user`` already holds the tier's number of usable keys."""
    limits = limits_for(_current_tier(user.id))
    now = now or utcnow()
    active = (ApiKey.select().where(
        ApiKey.user == user.id, ApiKey.revoked_at.is_null(),
        ApiKey.expires_at.is_null() | (ApiKey.expires_at > now)).count())
    if active >= limits.max_api_keys:
        raise errors.TierLimitExceeded(
            f"The {limits.tier} plan allows {limits.max_api_keys} active API keys; "
            "revoke one or upgrade.", limit="max_api_keys", allowed=limits.max_api_keys)


def check_active_config_quota(user: User, active_configs: int) -> None:
    """Raise TierLimitExceeded unless ``user`` may run one more active copy config.

    ``active_configs`` is how many the user runs now (the caller counts them,
    inside the transaction that activates the next one).
    """
    limits = limits_for(_current_tier(user.id))
    if active_configs >= limits.max_active_configs:
        raise errors.TierLimitExceeded(
            f"The {limits.tier} plan allows {limits.max_active_configs} active copy "
            "configs; stop one or upgrade.", limit="max_active_configs",
            allowed=limits.max_active_configs)
