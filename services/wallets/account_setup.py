"""Starting a trading account's setup (onboarding) by itself: at every sign-in, so an API
user who goes straight to trading never waits on a setup nobody started.

Only where the operator configured a chain (``POLYGON_RPC_URL``): without one no wallet can
be deployed or approved, and ``GET /api/wallets/deposit-address`` is refused the same way.
"""

from __future__ import annotations

from uuid import UUID

from models.user import User
from services.platform.principal import user_id_of
from services.wallets import onboarding_queue, wallets


def start_at_sign_in(user: User | UUID | str) -> None:
    """The user's deposit wallet and its onboarding job, queued once; nothing when setup is
    already under way, finished or failed (a failure is retried by the user), or no chain."""
    if not onboarding_queue.chain_configured():
        return
    wallet = wallets.for_user(user_id_of(user))
    if wallet is None:
        wallets.get_or_create(user)  # a new wallet queues its onboarding (once, if it won)
        return
    onboarding_queue.queue_if_waiting(wallet)


__all__ = ["start_at_sign_in"]
