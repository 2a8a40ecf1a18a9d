"""orders.settle after a reconciliation got there first, against the sandbox venue over HTTP.

A lost or slow answer lets the reconciler look the order up by its hash and store what the
venue knew (fills, the first acknowledgement) before the answer is recorded. Recording the
answer then must keep what the answer does not carry, mirror the stored order onto the
trade, and answer the order as stored.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from models.base import utcnow
from models.trading import Order, Trade
from services.trading import order_reconcile, orders
from services.trading.order_plan import OrderRequest


def _sent_and_reconciled(trader, token: str, detected_at=None):
    """A copy order recorded, really sent, and reconciled before its answer is recorded."""
    prepared = orders.prepare_order(
        trader.user, OrderRequest.checked(token, "buy", "10", "market", time_in_force="FAK"),
        orders.Origin("copy", detected_at=detected_at))
    [order] = orders.record_orders([prepared])
    answer = orders.post(prepared)
    assert answer.result is not None and answer.result.success, answer
    reconciled = order_reconcile.reconcile(order.id, acct=prepared.acct)
    assert reconciled.status == "matched" and reconciled.filled_size == Decimal(10)
    assert reconciled.acknowledged_at is not None
    return order, prepared, answer, reconciled


def _assert_mirrored(settled: Order, stored: Order) -> Trade:
    """The trade and the answer show the order as stored; the trade is returned."""
    trade = Trade.get(Trade.order == stored.id)
    assert (trade.filled_size, trade.filled_value, trade.fee) == (
        stored.filled_size, stored.filled_value, stored.fee)
    for name in ("status", "filled_size", "filled_value", "fee", "error", "acknowledged_at",
                 "updated_at", "order_hash", "detected_at"):
        assert getattr(settled, name) == getattr(stored, name), name
    return trade


def test_an_answer_after_a_reconciliation_keeps_the_first_acknowledgement(
        trader, make_sandbox_market):
    market = make_sandbox_market(fee_rate="0.05")
    detected = utcnow() - timedelta(seconds=2)
    order, prepared, answer, reconciled = _sent_and_reconciled(trader, market.yes, detected)
    first_fill = Trade.get(Trade.order == order.id).filled_at
    assert first_fill is not None

    # ``order`` is the record as written before sending: pending, never acknowledged.
    settled = orders.settle(order, prepared, answer)

    stored = Order.get_by_id(order.id)
    assert stored.acknowledged_at == reconciled.acknowledged_at
    assert stored.status == "matched" and stored.filled_size == Decimal(10)
    assert stored.fee > 0  # the answer's walk of the book prices it; the lookup could not
    trade = _assert_mirrored(settled, stored)
    assert trade.status == "filled" and trade.filled_at == first_fill
    assert trade.latency_ms == int((reconciled.acknowledged_at - detected).total_seconds()
                                   * 1000)
    assert settled.status == "matched" and settled.filled_size == Decimal(10)


def test_a_refusal_after_a_reconciliation_keeps_the_fills_it_found(trader, market,
                                                                  venue_control):
    order, prepared, _, reconciled = _sent_and_reconciled(trader, market.yes)
    # A second POST of the same order, refused by the venue: a real 4xx answer.
    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "status": 400, "count": 1}, expect=201)
    try:
        refused = orders.post(prepared)
    finally:
        venue_control.call("DELETE", "/faults", expect=200)
    assert refused.refused is not None

    settled = orders.settle(order, prepared, refused)

    # The venue matched the order: a refusal of a second copy never replaces that.
    stored = Order.get_by_id(order.id)
    assert stored.status == "matched" and stored.error is None
    assert (stored.filled_size, stored.filled_value, stored.acknowledged_at) == (
        reconciled.filled_size, reconciled.filled_value, reconciled.acknowledged_at)
    _assert_mirrored(settled, stored)
    assert settled.status == "matched" and settled.filled_size == Decimal(10)
