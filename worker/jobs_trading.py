"""Trading jobs: settling order records whose venue answer was lost (timeouts, crashes).

Both are safe to run any number of times: reconciling only reads the venue's view of an
order (looked up by its signed hash) and writes it onto the record.
"""

from __future__ import annotations

from datetime import timedelta

from services.trading import order_reconcile
from worker.jobs import job


@job(order_reconcile.RECONCILE_JOB)
def reconcile_order(order_id: str) -> str:
    """Bring one order record in line with the venue; return its status."""
    return order_reconcile.reconcile(order_id).status


@job(order_reconcile.RECONCILE_PENDING_JOB)
def reconcile_pending(older_than_seconds: int = 30) -> int:
    """Reconcile every order still pending after ``older_than_seconds``; return how many."""
    return order_reconcile.reconcile_pending(timedelta(seconds=older_than_seconds))
