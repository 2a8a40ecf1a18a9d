"""After a restart or a take-over: account for every copy intent whose order may be in flight.

For each open intent of a target's configs (written by this engine before, or by one
that is no longer alive), the order record the order service wrote before sending is
looked up by the intent id:

- no order record: the order never left (the service writes it before sending), so the
  intent is placed now, or failed as ``not_sent`` when it is too old to be worth copying;
- an order record: the venue is asked about its hash (``orders.reconcile``) and the
  intent takes the outcome, adding any fill to the config's position.

Paper intents without a paper fill are filled now. Nothing is ever sent twice: a re-placed
intent had no order, and taking over an intent is a conditional update only one engine wins.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from uuid import UUID

from models.base import utcnow
from models.copying import (
    INTENT_CANCELLED,
    INTENT_FAILED,
    INTENT_FILLED,
    INTENT_PENDING,
    INTENT_SENT,
    CopyIntent,
)
from worker.copy_engine import store

if TYPE_CHECKING:
    from worker.copy_engine.engine import CopyEngine, TargetRuntime

log = logging.getLogger("copytrade.copy_engine")


def intent_row(intent: CopyIntent) -> dict[str, Any]:
    """The fields placing needs, from a stored intent."""
    return {"id": intent.id, "config": intent.config_id, "token_id": intent.token_id,
            "side": intent.side, "size": intent.size, "price": intent.price,
            "seen_at": intent.seen_at, "condition_id": intent.condition_id,
            "market_slug": intent.market_slug, "outcome": intent.outcome,
            "status": intent.status}


def _paper_done(intent: CopyIntent) -> bool:
    from models.trading import PaperTrade

    return PaperTrade.select().where(
        PaperTrade.config_id == intent.config_id, PaperTrade.token_id == intent.token_id,
        PaperTrade.created_at >= intent.seen_at).exists()


def reconcile_intent(intent_id: UUID, worker: str, stale_after: float
                     ) -> dict[str, Any] | None:
    """Settle one open intent from the records and the venue; a row to place, or None."""
    from models.trading import ORDER_OPEN, Order
    from services import orders

    intent = CopyIntent.get_by_id(intent_id)
    if intent.status not in (INTENT_PENDING, INTENT_SENT):
        return None
    if intent.status == INTENT_PENDING and intent.worker != worker and not store.claim_intent(
            intent.id, worker, intent.worker):
        return None
    age = (utcnow() - intent.seen_at).total_seconds()
    if intent.paper:
        if _paper_done(intent):
            store.settle_intent(intent.id, {"status": INTENT_FILLED, "settled_at": utcnow()})
            return None
        return _replace_or_expire(intent, age, stale_after)
    order = Order.get_or_none(Order.target_trade_id == str(intent.id))
    if order is None:
        return _replace_or_expire(intent, age, stale_after)
    if order.status in ORDER_OPEN:
        order = orders.reconcile(order.id)
    filled = Decimal(order.filled_size or 0)
    value = Decimal(order.filled_value or 0)
    changes: dict[str, Any] = {"order_id": order.order_hash}
    if order.status in ORDER_OPEN:
        changes["status"] = INTENT_SENT
    elif filled > 0:
        changes.update(status=INTENT_FILLED, filled_size=filled, filled_price=value / filled,
                       fee=order.fee, settled_at=utcnow())
    elif order.status in ("rejected", "failed"):
        changes.update(status=INTENT_FAILED, reason="order_refused",
                       detail=order.error or "", settled_at=utcnow())
    else:
        changes.update(status=INTENT_CANCELLED, reason="not_filled", settled_at=utcnow())
    if order.submitted_at and intent.latency_ms is None:
        changes["sent_at"] = order.submitted_at
        changes["latency_ms"] = max(0, int((order.submitted_at - intent.seen_at)
                                           .total_seconds() * 1000))
    store.settle_intent(intent.id, changes)
    if changes.get("status") == INTENT_FILLED:
        store.apply_position(intent.config_id, False, intent.token_id, intent.side, filled,
                             value, condition_id=intent.condition_id,
                             market_slug=intent.market_slug, outcome=intent.outcome)
    return None


def _replace_or_expire(intent: CopyIntent, age: float, stale_after: float
                       ) -> dict[str, Any] | None:
    if age > stale_after:
        store.settle_intent(intent.id, {
            "status": INTENT_FAILED, "reason": "not_sent", "settled_at": utcnow(),
            "detail": f"The worker stopped before sending; {int(age)} s later it is too late "
                      "to copy."})
        return None
    return intent_row(intent)


async def reconcile_target(engine: CopyEngine, rt: TargetRuntime) -> int:
    """Reconcile the open intents of a target's configs; how many orders were placed now."""
    if not rt.configs:
        return 0
    intents = await engine.db(store.open_intents, list(rt.configs))
    if not intents:
        return 0
    alive = set(await engine.redis_call(engine.leases.live_engines))
    placed = 0
    for intent in intents:
        if intent.worker != engine.name and intent.worker in alive:
            continue  # its engine still runs (a hand-over in progress) and settles it
        try:
            row = await engine.db(reconcile_intent, intent.id, engine.name,
                                  engine.settings.stale_intent_seconds)
        except Exception:
            log.exception("engine %s: reconciling intent %s failed", engine.name, intent.id)
            continue
        config = rt.configs.get(intent.config_id)
        if row is not None and config is not None:
            log.warning("engine %s: intent %s was never sent; placing it now", engine.name,
                        intent.id)
            await engine.place_intent(config, row)
            placed += 1
    return placed


__all__ = ["reconcile_intent", "reconcile_target"]
