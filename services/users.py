"""User profiles."""

from __future__ import annotations

from typing import Any

from models import User
from services import wallets
from services.principal import Principal


def profile_of(user: User) -> dict[str, Any]:
    """The public profile of ``user``."""
    return {
        "id": user.id, "email": user.email, "tier": user.tier, "created_at": user.created_at,
        # None until the trading wallet is created (first balance, deposit or withdrawal).
        "trading_wallet_address": wallets.address_of(user),
    }


def me(principal: Principal) -> dict[str, Any]:
    """The caller's own profile."""
    principal.require_scope("read:account")
    return profile_of(principal.user)
