"""Starting a trading account's setup (onboarding) by itself at sign-in, for an account
whose wallet exists but whose setup nobody started (accounts from before setup started by
itself).

A sign-in makes no wallet: a new user may still connect the polymarket.com account they
already have (``trading_accounts.connect``), which needs the account to have none yet. A
new user's wallet, and its setup, start with the first live trade (its 409 says so), the
Wallet page or ``POST /api/trading-account/onboarding``. Only where a chain is configured.
"""

from __future__ import annotations

from uuid import UUID

from models.user import User
from services.platform.principal import user_id_of
from services.wallets import onboarding_queue, wallets


def start_at_sign_in(user: User | UUID | str) -> None:
    """Queue the user's onboarding once if their wallet has one nobody started; nothing
    when it is under way, finished or failed (a failure is retried by the user), when they
    have no wallet, or without a chain."""
    if not onboarding_queue.chain_configured():
        return
    wallet = wallets.for_user(user_id_of(user))
    if wallet is not None:
        onboarding_queue.queue_if_waiting(wallet)


__all__ = ["start_at_sign_in"]
