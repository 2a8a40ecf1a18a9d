"""An order record's stored state and how it moves: the one write every status change makes.

Order status: pending -> delayed | live | matched | cancelled | rejected | failed;
delayed -> live | matched | cancelled; live -> matched | cancelled
(``models.trading.ORDER_PREDECESSORS``). Every write is a conditional
UPDATE on the statuses the new one may follow, so two processes settling one order (an
answer and a reconciliation, two engines) never replace a final status with another: the
later write changes nothing and reads back what the earlier one stored. Trade status
(SPEC): pending -> filled (any fill, once the order is done) | cancelled (done without a
fill) | failed (rejected, never reached the venue, or every fill's venue trade FAILED).

Placing (services/trading/orders.py) and reconciling (services/trading/order_reconcile.py)
both write through ``finish_many`` (``finish``: a batch of one); a copy fill's answers
settle as one batch.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.base import atomic, utcnow
from models.bulk import IfNull, select_rows, update_returning_rows, update_rows
from models.trading import (
    ORDER_FAILED,
    ORDER_LIVE,
    ORDER_MATCHED,
    ORDER_OPEN,
    ORDER_PREDECESSORS,
    ORDER_REJECTED,
    TRADE_CANCELLED,
    TRADE_FAILED,
    TRADE_FILLED,
    TRADE_PENDING,
    Order,
    Trade,
)
from services.markets import catalogue
from services.notifications import events
from services.trading import order_fills

log = logging.getLogger(__name__)

ZERO = Decimal(0)

def _trade_status(order_status: str, filled: Decimal) -> str:
    if order_status in ORDER_OPEN:
        return TRADE_PENDING
    if order_status in (ORDER_REJECTED, ORDER_FAILED):
        return TRADE_FAILED
    return TRADE_FILLED if filled > 0 else TRADE_CANCELLED


# Every column written after the record: here (also by a reconciliation) or, for the
# preview, by the database when it purges the preview.
STORED_STATE = ("status", "filled_size", "filled_value", "fee", "error", "acknowledged_at",
                "updated_at", "preview")


@dataclass(frozen=True, slots=True)
class Finish:
    """One order's new state, as ``finish_many`` writes it.

    ``timings``: the stage timings measured while placing it (``placement_ms``, ``ack_ms``,
    ``taker_delay_ms``), written with the answer. ``deadline``: closed unanswered (the
    late-fill sweep follows it: ``closed_at_deadline``).
    """

    order: Order
    status: str
    filled_size: Decimal | None = None
    filled_value: Decimal | None = None
    fee: Decimal | None = None
    error: str | None = None
    acknowledged: bool = False
    deadline: bool = False
    timings: Mapping[str, int] | None = None

    def changes(self, now: datetime) -> dict[str, Any]:
        """The order's columns this writes (``now``: the time of the write)."""
        changes: dict[str, Any] = {"status": self.status, "updated_at": now,
                                   **(self.timings or {})}
        if self.filled_size is not None:
            changes["filled_size"] = self.filled_size
            changes["filled_value"] = self.filled_value if self.filled_value is not None \
                else ZERO
        if self.fee is not None:
            changes["fee"] = self.fee
        if self.error is not None:
            changes["error"] = self.error
        if self.deadline:
            changes["deadline_closed_at"] = now
        if self.acknowledged:  # the first acknowledgement stays (a reconciliation's may)
            changes["acknowledged_at"] = IfNull(now)
        return changes


def finish(order: Order, status: str, *, filled_size: Decimal | None = None,
           filled_value: Decimal | None = None, fee: Decimal | None = None,
           error: str | None = None, acknowledged: bool = False,
           deadline: bool = False, timings: Mapping[str, int] | None = None) -> Order:
    """Write the order's new state and mirror it onto its trade; the order as now stored
    (``finish_many`` of one: see ``Finish`` for the arguments)."""
    [stored] = finish_many([Finish(order, status, filled_size, filled_value, fee, error,
                                   acknowledged, deadline, timings)])
    return stored


def _guard(changes: Mapping[str, Any]) -> Mapping[str, Sequence[str]]:
    return {"status": ORDER_PREDECESSORS[changes["status"]]}


def finish_many(finishes: Sequence[Finish]) -> list[Order]:
    """Write orders' new states and mirror them onto their trades, in one transaction (the
    caller's, when open); each order as now stored, in the order given.

    A fill's copies settle in a few statements, not two each: the orders written and read
    back in one statement per shape of change, their trades in one more per shape.
    """
    if not finishes:
        return []
    now = utcnow()
    with atomic():
        # Written and read back together (plain SQL: peewee's compiler cost more than the
        # database): the fills, fee and error a reconciliation stored and this answer does
        # not replace are what the trade mirrors and the caller gets. Only over a status
        # this one may follow: a final status is never replaced.
        states = update_returning_rows(
            Order, [(step.order.id, step.changes(now)) for step in finishes], STORED_STATE,
            guard=_guard)
        lost = [step for step in finishes if step.order.id not in states]
        if lost:  # lost the race (or no such record): what the winner stored stands
            states.update(_lost_races(lost))
        stored = []
        for step in finishes:
            state = states[step.order.id]
            order = as_stored(step.order, state)
            if step.timings and state.get("status") == step.status:
                order.__data__.update(step.timings)
            stored.append(order)
        update_rows(Trade, [(order.id, trade_changes(order, now)) for order in stored],
                    key="order")
    for order in stored:
        _notify(order)
    return stored


def _notify(order: Order) -> None:
    """order.filled (the user's own orders: copies say copy.filled) and order.failed (every
    order, a copy's too); once per order, whoever finishes it."""
    filled = order.filled_size or ZERO
    if order.status in (ORDER_REJECTED, ORDER_FAILED):
        events.emit(order.user_id, "order.failed", f"order.failed:{order.id}",
                    link="/dashboard/positions", order_id=order.id,
                    market=order.market_slug or order.token_id, side=order.side,
                    reason=(order.error or "refused by the venue")[:200],
                    **catalogue.named(order.market_slug, order.token_id))
    elif order.source != "copy" and order.status not in ORDER_OPEN and filled > 0:
        events.emit(order.user_id, "order.filled", f"order.filled:{order.id}",
                    link="/dashboard/positions", order_id=order.id,
                    market=order.market_slug or order.token_id,
                    side="Bought" if order.side == "buy" else "Sold", size=filled,
                    price=(order.filled_value / filled).quantize(Decimal("0.0001")),
                    amount=order.filled_value, **catalogue.named(order.market_slug, order.token_id))


def as_stored(order: Order, state: dict[str, Any]) -> Order:
    """The order record with its stored state read back (the rest never changes)."""
    stored = Order(__no_default__=True)
    stored.__data__.update(order.__data__)
    stored.__data__.update(state)
    return stored


def _lost_races(lost: Sequence[Finish]) -> dict[UUID, dict[str, Any]]:
    """The orders' stored states after writes that found their predecessors gone."""
    found = {state["id"]: state for state in select_rows(   # plain SQL, as above
        Order, ("id", *STORED_STATE), {"id": [step.order.id for step in lost]})}
    for step in lost:
        state = found.get(step.order.id)
        if state is None:
            raise Order.DoesNotExist(f"order {step.order.id} is not stored")
        del state["id"]
        order, status = step.order, step.status
        if state["status"] == ORDER_FAILED and status in (ORDER_LIVE, ORDER_MATCHED):
            # The venue has an order we failed after the grace: tell the operator.
            log.error("order %s was failed as never sent, but the venue answers %s; the "
                      "grace (ORDER_NOT_FOUND_GRACE_SECONDS) is too short", order.order_hash,
                      status)
        else:
            log.info("order %s is %s already; %s not written", order.order_hash,
                     state["status"], status)
    return found


def trade_changes(order: Order, now: datetime) -> dict[str, Any]:
    """What the order's trade mirrors of its stored state (``now``: a first fill's time)."""
    trade_status = _trade_status(order.status, order.filled_size)
    changes: dict[str, Any] = {"status": trade_status, "filled_size": order.filled_size,
                               "filled_value": order.filled_value, "fee": order.fee}
    if trade_status == TRADE_FILLED:  # the first time it counts as filled
        changes["filled_at"] = IfNull(now)
    if order.filled_size > 0:  # matched: the venue settles it on chain from now on
        changes["settlement"] = IfNull(order_fills.FIRST_SETTLEMENT)
    if order.detected_at is not None and order.acknowledged_at is not None:
        elapsed = order.acknowledged_at - order.detected_at
        changes["latency_ms"] = max(0, int(elapsed.total_seconds() * 1000))
    return changes

