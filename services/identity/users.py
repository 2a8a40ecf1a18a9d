"""User profiles, and the operator's account controls (tier, disable, enable)."""

from __future__ import annotations

from typing import Any

from models import User
from models.base import utcnow
from services.copying import configs
from services.platform import credential_generation, errors, tiers
from services.wallets import wallets


def _limits(limits: tiers.TierLimits) -> dict[str, int | None]:
    return {"max_active_configs": limits.max_active_configs,
            "max_api_keys": limits.max_api_keys}


def profile_of(user: User) -> dict[str, Any]:
    """The public profile of ``user``: its tier is the one whose limits apply."""
    limits = tiers.limits_for(user.tier)
    return {
        "id": user.id, "email": user.email, "tier": limits.tier, "limits": _limits(limits),
        "created_at": user.created_at,
        # None until the trading wallet is created (first balance, deposit or withdrawal).
        "trading_wallet_address": wallets.address_of(user),
    }


# -- the operator's controls (the ``copytrade users`` commands) ---------------------------

def overview() -> list[dict[str, Any]]:
    """Every account, oldest first: tier, limits, what counts against them, disabled or not."""
    rows = []
    for user in User.select().order_by(User.created_at, User.email):
        limits = tiers.limits_for(user.tier)
        rows.append({
            "email": user.email, "tier": user.tier,
            # The stored tier is not in the table: the default tier's limits apply.
            "effective_tier": limits.tier, **_limits(limits),
            "active_configs": tiers.active_configs(user.id).count(),
            "api_keys": tiers.count_api_keys(user.id),
            "disabled_at": user.disabled_at, "created_at": user.created_at,
        })
    return rows


def by_email(email: str) -> User:
    """The account of ``email`` (any case); NotFound when there is none."""
    user = User.get_or_none(User.email == email.strip().lower())
    if user is None:
        raise errors.NotFound(f"No account has the email {email!r}.")
    return user


def set_tier(email: str, tier: str) -> User:
    """Move an account to ``tier``; BadRequest when the tier table has no such tier."""
    known = tiers.names()
    if tier not in known:
        raise errors.BadRequest(f"No tier {tier!r}; the tiers are: {', '.join(known)}.")
    user = by_email(email)
    User.update(tier=tier).where(User.id == user.id).execute()
    credential_generation.bump()  # cached keys carry the account's row
    user.tier = tier
    return user


def disable(email: str) -> tuple[User, int]:
    """Disable an account and stop its running copy configs; returns it and how many stopped.

    Its credentials are refused from now on (services/principal.require_enabled); they are
    kept, so ``enable`` restores them. Stopped configs stay stopped after ``enable``.
    """
    user = by_email(email)
    if user.disabled_at is None:
        # Disable first: a credential resolved from now on is refused, so no new start.
        user.disabled_at = utcnow()
        User.update(disabled_at=user.disabled_at).where(User.id == user.id).execute()
        credential_generation.bump()  # every process refuses the account's cached keys
    stopped = 0
    for config_id in [c.id for c in tiers.active_configs(user.id)]:
        configs.stop(user, config_id)  # the usual path: the executors end
        stopped += 1
    return user, stopped


def enable(email: str) -> User:
    """Let a disabled account sign in and use its credentials again (nothing restarts)."""
    user = by_email(email)
    User.update(disabled_at=None).where(User.id == user.id).execute()
    credential_generation.bump()
    user.disabled_at = None
    return user
