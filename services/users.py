"""User profiles."""

from __future__ import annotations

from typing import Any

from models import User
from services import wallets


def profile_of(user: User) -> dict[str, Any]:
    """The public profile of ``user``."""
    return {
        "id": user.id, "email": user.email, "tier": user.tier, "created_at": user.created_at,
        # None until the trading wallet is created (first balance, deposit or withdrawal).
        "trading_wallet_address": wallets.address_of(user),
    }
