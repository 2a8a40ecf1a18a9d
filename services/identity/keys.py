"""Scoped API keys: mint, list, revoke, and resolve a ``svck_live_...`` bearer token.

The secret is shown once. The database keeps the safe ``prefix`` and an
HMAC-SHA256 of the secret under a key derived from SECRET_KEY, so a leaked
table alone cannot be replayed. ``last_used_at`` is written at most once a
minute per key, never on every request.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

from models import ApiKey, User
from models.base import db, utcnow
from models.prepared import Prepared
from schemas.vocabulary import ALL_SCOPES, SCOPES
from services.identity import auth, verified_keys
from services.platform import credential_generation, errors, keyring, tiers
from services.platform.principal import Principal
from services.platform.runtime import runtime
from services.wallets import account_setup

SECRET_PREFIX = "svck_"
LIVE_PREFIX = "svck_live_"
SECRET_RANDOM_BYTES = 32  # token_urlsafe: 43 characters of [A-Za-z0-9_-]
SHOWN_RANDOM_CHARS = 6  # how much of the random part the safe prefix reveals
DEFAULT_EXPIRES_IN_DAYS = 90
MAX_EXPIRES_IN_DAYS = 365
NAME_MAX = 80
LAST_USED_RESOLUTION = timedelta(minutes=1)
MONEY_SCOPE = "wallet:write"


@dataclass(frozen=True)
class CreatedKey:
    """A freshly minted key: the stored record and its one-time secret."""

    key: ApiKey
    secret: str


def _hash(secret: str) -> str:
    return keyring.keyed_hash(runtime().settings.secret_key, "api-key", secret)


def _check_request(name: Any, scopes: Any, expires_in_days: Any) -> tuple[str, list[str], int]:
    """Apply the ApiKeyCreateRequest rules (the schema states them too; services stand alone)."""
    problems: dict[str, list[str]] = {}
    if not isinstance(name, str) or not 1 <= len(name) <= NAME_MAX or not name.strip():
        problems["name"] = [f"Length must be between 1 and {NAME_MAX}."]
    if not isinstance(scopes, list | tuple) or not scopes:
        problems["scopes"] = ["At least one scope is required."]
    else:
        unknown = [s for s in scopes if s not in ALL_SCOPES]
        if unknown:
            problems["scopes"] = [f"Unknown scope(s): {', '.join(map(str, unknown))}."]
        elif len(set(scopes)) != len(scopes):
            problems["scopes"] = ["Scopes must not repeat."]
    days = DEFAULT_EXPIRES_IN_DAYS if expires_in_days is None else expires_in_days
    if isinstance(days, bool) or not isinstance(days, int) or not 0 <= days <= 365:
        problems["expires_in_days"] = [f"Must be between 0 and {MAX_EXPIRES_IN_DAYS}."]
    if problems:
        raise errors.ValidationFailed(
            f"Validation failed: {', '.join(sorted(problems))}.", fields=problems)
    ordered = [s for s in SCOPES if s in set(scopes)]
    return name, ordered, days


def create(principal: Principal, name: str, scopes: Sequence[str],
           expires_in_days: int | None = DEFAULT_EXPIRES_IN_DAYS, *,
           step_up_token: str | None = None) -> CreatedKey:
    """Mint a key for the principal's user (session only, within the tier's key quota);
    a key that can move money (``wallet:write``) needs a step-up token as well."""
    principal.require_session()
    name, ordered, days = _check_request(name, list(scopes), expires_in_days)
    if MONEY_SCOPE in ordered:
        # A stolen session cookie alone must not mint a key that withdraws.
        auth.require_step_up(principal, step_up_token)
    now = utcnow()
    secret = LIVE_PREFIX + secrets.token_urlsafe(SECRET_RANDOM_BYTES)
    with db.atomic():
        tiers.check_api_key_quota(principal.user, now=now)
        key = ApiKey.create(
            user=principal.user, name=name, scopes=" ".join(ordered),
            prefix=secret[: len(LIVE_PREFIX) + SHOWN_RANDOM_CHARS],
            key_hash=_hash(secret), created_at=now,
            expires_at=now + timedelta(days=days) if days else None,
        )
    return CreatedKey(key=key, secret=secret)


def list_keys(principal: Principal) -> list[ApiKey]:
    """Every key of the principal's user, newest first (revoked and expired included)."""
    principal.require_session()
    return list(ApiKey.select().where(ApiKey.user == principal.user_id)
                .order_by(ApiKey.created_at.desc(), ApiKey.id.desc()))


def revoke(principal: Principal, key_id: UUID) -> None:
    """Revoke one of the principal's keys; NotFound (404) for unknown or other users' keys."""
    principal.require_session()
    key = ApiKey.get_or_none(ApiKey.id == key_id, ApiKey.user == principal.user_id)
    if key is None:
        raise errors.NotFound("No such API key.")
    (ApiKey.update(revoked_at=utcnow())
     .where(ApiKey.id == key.id, ApiKey.revoked_at.is_null()).execute())
    credential_generation.bump()  # every process's cached copy of the key is dropped


def count_active(user_id: UUID, *, now: Any = None) -> int:
    """How many of the user's keys are usable (neither revoked nor expired)."""
    now = now or utcnow()
    return (ApiKey.select().where(
        ApiKey.user == user_id, ApiKey.revoked_at.is_null(),
        ApiKey.expires_at.is_null() | (ApiKey.expires_at > now)).count())


# The key and its user in one query (the user is needed for every request anyway),
# compiled once: it runs on every request made with a key.
_KEY_BY_HASH = Prepared(
    lambda key_hash: ApiKey.select(ApiKey, User).join(User)
    .where(ApiKey.key_hash == key_hash).limit(1), ApiKey.key_hash)


def resolve(token: str, generation: Any = None) -> Principal:
    """The Principal of an API-key token; InvalidToken (401) if unknown, revoked or expired.

    ``generation``: the credential generation this request read from Redis before any
    database read (None: unknown, so the key is read from the database); with it a key
    verified under the same generation within ``API_KEY_CACHE_SECONDS`` is not read again
    (services/identity/verified_keys.py)."""
    if not token.startswith(LIVE_PREFIX):
        raise errors.InvalidToken()
    seconds = runtime().settings.api_key_cache_seconds if generation is not None else 0
    if seconds:
        token_digest = verified_keys.digest(token)
        entry = verified_keys.get(token_digest, generation)
        if entry is not None:
            now = utcnow()
            if entry.expires_at is None or entry.expires_at > now:
                if entry.last_used_at is None or now - entry.last_used_at >= LAST_USED_RESOLUTION:
                    _record_use(entry.key_id, now)
                    entry.last_used_at = now
                return Principal(user=entry.user(), kind="api_key", scopes=entry.scopes,
                                 credential_id=entry.key_id)
    key = _KEY_BY_HASH.first(_hash(token))
    now = utcnow()
    if key is None or key.revoked_at is not None or (
            key.expires_at is not None and key.expires_at <= now):
        raise errors.InvalidToken()
    if key.last_used_at is None:
        # A key's first use is a sign-in of its own: an account only ever used through
        # keys (made before setup started at sign-in) gets its trading setup started.
        account_setup.start(key.user)
    _touch(key, now)
    scopes = frozenset(key.scope_list)
    if seconds and key.user.disabled_at is None:  # a refused account's key is never kept
        verified_keys.put(token_digest, verified_keys.Entry(
            key.id, scopes, key.expires_at, key.last_used_at, key.user, generation,
            time.monotonic() + seconds))
    return Principal(user=key.user, kind="api_key", scopes=scopes, credential_id=key.id)


def _touch(key: ApiKey, now: Any) -> None:
    """Record use, at most once per LAST_USED_RESOLUTION (no write on every request)."""
    if key.last_used_at is not None and now - key.last_used_at < LAST_USED_RESOLUTION:
        return
    _record_use(key.id, now)
    key.last_used_at = now


def _record_use(key_id: UUID, now: Any) -> None:
    # Written only when the stored moment is a minute old: processes that each hold the key
    # change the row once a minute between them.
    stale = now - LAST_USED_RESOLUTION
    (ApiKey.update(last_used_at=now)
     .where(ApiKey.id == key_id,
            ApiKey.last_used_at.is_null() | (ApiKey.last_used_at <= stale))
     .execute())
