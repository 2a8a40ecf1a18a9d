"""Plan tiers and their limits, as configured (``Settings.tiers``: README "Tiers").

Exceeding a limit raises TierLimitExceeded (403 tier_limit_exceeded); an unlimited
limit (None) is never checked. The API-key quota is enforced by services/identity/keys.py;
copy configs call ``check_active_config_quota`` before activating one. A user row
naming a tier the table no longer has gets the default tier's limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import peewee

from config import TierSettings
from models import ApiKey, User
from models.base import db, utcnow
from models.copying import CopyConfig
from services.platform import errors
from services.platform.runtime import runtime


@dataclass(frozen=True)
class TierLimits:
    """What one tier allows (None: unlimited)."""

    tier: str
    max_active_configs: int | None
    max_api_keys: int | None


def configured() -> TierSettings:
    """This process's tier table and default tier."""
    return runtime().settings.tiers


def names(plans: TierSettings | None = None) -> tuple[str, ...]:
    """Every tier name, in table order."""
    return tuple((plans or configured()).table)


def default_tier(plans: TierSettings | None = None) -> str:
    """The tier new accounts start on."""
    return (plans or configured()).default


def limits_for(tier: str, plans: TierSettings | None = None) -> TierLimits:
    """The limits of ``tier`` (a tier the table lacks gets the default tier's)."""
    plans = plans or configured()
    name = tier if tier in plans.table else plans.default
    row = plans.table[name]
    return TierLimits(tier=name, max_active_configs=row.max_active_configs,
                      max_api_keys=row.max_api_keys)


def _current_tier(user_id: UUID) -> str:
    """The user's tier as stored now (it may have changed since the request began).

    On PostgreSQL the row is locked too, serialising one user's quota checks
    (SQLite has a single writer anyway). Call inside a transaction.
    """
    query = User.select(User.tier).where(User.id == user_id)
    if isinstance(db.obj, peewee.PostgresqlDatabase):
        query = query.for_update()
    row = query.first()
    return row.tier if row is not None else default_tier()


def count_api_keys(user_id: UUID, *, now: datetime | None = None) -> int:
    """How many usable (unrevoked, unexpired) API keys the user holds: what the quota counts."""
    now = now or utcnow()
    return (ApiKey.select().where(
        ApiKey.user == user_id, ApiKey.revoked_at.is_null(),
        ApiKey.expires_at.is_null() | (ApiKey.expires_at > now)).count())


def active_configs(user_id: UUID) -> peewee.ModelSelect:
    """The copy configs the user runs now: what the quota counts."""
    return CopyConfig.select().where(CopyConfig.user == user_id, CopyConfig.is_active,
                                     CopyConfig.deleted_at.is_null())


def check_api_key_quota(user: User, *, now: datetime | None = None) -> None:
    """Raise TierLimitExceeded when ``user`` already holds the tier's number of usable keys."""
    limits = limits_for(_current_tier(user.id))
    if limits.max_api_keys is None:
        return
    if count_api_keys(user.id, now=now) >= limits.max_api_keys:
        raise errors.TierLimitExceeded(
            f"The {limits.tier} plan allows {limits.max_api_keys} active API keys; "
            "revoke one or ask the operator for another plan.", limit="max_api_keys",
            allowed=limits.max_api_keys)


def check_active_config_quota(user: User, active_configs: int) -> None:
    """Raise TierLimitExceeded unless ``user`` may run one more active copy config.

    ``active_configs`` is how many the user runs now (the caller counts them,
    inside the transaction that activates the next one).
    """
    limits = limits_for(_current_tier(user.id))
    if limits.max_active_configs is not None and active_configs >= limits.max_active_configs:
        raise errors.TierLimitExceeded(
            f"The {limits.tier} plan allows {limits.max_active_configs} active copy "
            "configs; stop one or ask the operator for another plan.",
            limit="max_active_configs", allowed=limits.max_active_configs)
