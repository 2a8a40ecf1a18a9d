"""Trading jobs: settling order records whose venue answer was lost (timeouts, crashes).

Both are safe to run any number of times: reconciling only reads the venue's view of an
order (looked up by its signed hash) and writes it onto the record.
"""

from __future__ import annotations

from datetime import timedelta

from services.trading import orders
from worker.jobs import job


@job(orders.RECONCILE_JOB)
def reconcile_order(order_id: str) -> str:
    """Bring one order record in line with the venue; return its status."""
    return orders.reconcile(order_id).status


@job(orders.RECONCILE_PENDING_JOB)
def reconcile_pending(older_than_seconds: int = 30) -> int:
    """Reconcile every order still pending after ``older_than_seconds``; return how many."""
    return orders.reconcile_pending(timedelta(seconds=older_than_seconds))
