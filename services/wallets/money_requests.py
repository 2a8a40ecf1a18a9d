"""The request half of the wallet lifecycle that withdrawals and claims share: queue the
rows' jobs (or fail them, unsent, when the queue is unreachable) and wait briefly for their
hashes. The job half is wallet_batches (relayer) and wallet_transactions (on chain).

What stays per kind: validation and the rows it records (withdrawals.request,
claims.request), and the answer's shape (WithdrawResult, the claims summary).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from models.base import utcnow
from models.wallet import FAILED, QUEUED
from services.platform import chain_access
from services.wallets import broadcast_wait, trading_accounts, wallet_transactions


def queue_or_fail(rows: Sequence[Any], enqueue: Callable[[Any], None], noun: str) -> None:
    """Queue each row's job. When the queue is unreachable the caller gets 503 and will
    retry, so no row may go out later behind its back (maintenance re-queues open rows):
    each row nothing was sent for is failed, then the error is raised again (unless every
    row was taken by a job meanwhile: the enqueue did land, the request goes on)."""
    try:
        for row in rows:
            if row.status == QUEUED:
                enqueue(row)
    except Exception:
        message = (f"The {noun} could not be queued (the job queue was unreachable); "
                   "nothing was sent. Try again.")
        failed = False
        for row in rows:
            model = type(row)
            if trading_accounts.uses_relayer(row.wallet):
                # a job that took it (queued -> signed) may have submitted it: leave it be
                failed |= bool(model.update(status=FAILED, error=message, updated_at=utcnow())
                               .where((model.id == row.id) & (model.status == QUEUED))
                               .execute())
            else:  # on chain: failed unless a transaction is linked already
                failed |= wallet_transactions.Link(model, row.id,
                                                   "transaction").fail_unsent(message)
        if failed:
            raise


def await_hashes(model: Any, ids: Sequence[Any], wait_seconds: float | None) -> list[Any]:
    """The rows once each one's hash is known or it ended, or as they are after
    ``wait_seconds`` (default WITHDRAW_WAIT_SECONDS); bounded by broadcast_wait."""
    if wait_seconds is None:
        wait_seconds = chain_access.current().withdraw_wait_seconds
    return broadcast_wait.wait_until(
        lambda: [model.get_by_id(i) for i in ids],
        lambda rows: all(broadcast_wait.hash_known(r) for r in rows), wait_seconds)
