"""Starting a trading account's setup (onboarding) by itself (issue 44): at every sign-in
(the web's, REST's, an OAuth approval's), at an API key's first use and at a live trade.

A new account gets its deposit wallet at its first sign-in and the wallet's onboarding is
queued once, so an API user who signs in and goes straight to trading finds the account
set up (``GET /api/trading-account`` follows it). The user may still connect the
polymarket.com account they already have: ``trading_accounts.connect`` replaces the
generated wallet while it is unused (``generated_wallets``). An account whose wallet
exists but whose setup nobody started (made before this) has it queued at the same
moments. Only where a chain is configured: without one there is nothing to set up on.
"""

from __future__ import annotations

from uuid import UUID

from models.base import db
from models.user import User
from models.wallet import TradingWallet
from services.platform.principal import user_id_of
from services.wallets import onboarding_queue, wallets


def start(user: User | UUID | str) -> TradingWallet | None:
    """The user's wallet, its setup started if nobody started it yet: a new user's deposit
    wallet made (its onboarding queued once, however many requests ask at once), or an
    existing wallet's onboarding queued; nothing when it is under way, finished or failed
    (a failure is retried by the user).

    Nothing without a chain, and nothing inside a caller's transaction: a refusal that
    rolls it back would leave a queued job naming rows that never were."""
    user_id = user_id_of(user)
    wallet = wallets.for_user(user_id)
    if db.in_transaction() or not onboarding_queue.chain_configured():
        return wallet
    if wallet is None:
        return wallets.get_or_create(user_id)  # a new wallet queues its onboarding
    onboarding_queue.queue_if_waiting(wallet)
    return wallet


__all__ = ["start"]
