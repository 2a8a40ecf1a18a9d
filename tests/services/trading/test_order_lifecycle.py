"""The order state machine against the sandbox venue: delayed orders, settling and failed
trades, and reconciliation that always ends (through /data/orders and /data/trades)."""

from __future__ import annotations

import dataclasses
import time
from datetime import timedelta
from decimal import Decimal
from types import SimpleNamespace

import pytest

from models.base import utcnow
from models.trading import Order, OrderFill, Trade
from services.platform import errors, venues
from services.trading import (
    order_cancels,
    order_fills,
    order_reconcile,
    orders,
    positions,
    previews,
    stats,
)
from services.wallets import venue_accounts
from tests.venue_lifecycle import delay_market, fail_next_trade


def _place(trader, token, side, size, kind, price=None):
    """What placing answers (PlaceOrderResponse's fields, the status as stored)."""
    quote = previews.create(trader.user, token, side, size, kind, price)
    return SimpleNamespace(**orders.placed_view(orders.place_order(
        trader.user, token_id=token, side=side, size=size, order_type=kind, price=price,
        preview_id=quote["preview_id"])))


def _place_unanswered(trader, token, side, size, kind) -> tuple[Order, Trade]:
    """A manual order whose POST answer was lost: 503 to the caller, the record pending."""
    with pytest.raises(errors.VenueUnavailable) as raised:
        _place(trader, token, side, size, kind)
    order = Order.get(Order.order_hash == raised.value.details["order_id"])
    return order, Trade.get(Trade.order == order)


def _delay(venue_control, market, seconds: int) -> None:
    delay_market(venue_control, market.condition_id, seconds)


def _sent_ago(order: Order, seconds: float) -> None:
    Order.update(submitted_at=utcnow() - timedelta(seconds=seconds)) \
        .where(Order.id == order.id).execute()


def _seller(make_trader, market, venue_control, price: str = "0.50", size: str = "20"):
    """Another user resting a sell of the market's Yes token."""
    seller = make_trader("0")
    venue_control.grant(seller.maker, market.yes, size)  # held a while: the CLOB has seen them
    _place(seller, market.yes, "sell", size, "limit", price)
    return seller


def test_a_delayed_order_stays_open_and_fills_after_the_delay(trader, market, venue_control,
                                                            venue_clock):
    _delay(venue_control, market, 5)
    placed = _place(trader, market.yes, "buy", "10", "market")

    # Not a final "cancelled" with no fill: the venue has the order and may fill it.
    assert placed.status == "delayed" and placed.filled_size == 0
    order = Order.get(Order.order_hash == placed.order_id)
    assert order.status == "delayed" and order.acknowledged_at is not None
    assert Trade.get_by_id(placed.trade_id).status == "pending"
    assert order_reconcile.reconcile(order.id).status == "delayed"  # still waiting out the delay

    venue_clock.advance(5)
    assert order_reconcile.reconcile_pending(older_than=timedelta(0)) == 1
    order = Order.get_by_id(order.id)
    assert (order.status, order.filled_size, order.filled_value) == (
        "matched", Decimal(10), Decimal("5.1"))
    trade = Trade.get_by_id(placed.trade_id)
    # Counted as soon as it matched (positions, PnL), not yet settled on chain.
    assert (trade.status, trade.filled_size, trade.settlement, trade.settled_at) == (
        "filled", Decimal(10), "matched", None)
    assert positions.ledger(trader.user)[market.yes].size == Decimal(10)
    assert venue_control.balances(trader.maker)["positions"] == {market.yes: "10"}

    venue_clock.advance(6)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    trade = Trade.get_by_id(placed.trade_id)
    assert (trade.settlement, trade.status) == ("confirmed", "filled")
    assert trade.settled_at is not None
    [fill] = OrderFill.select().where(OrderFill.order == order.id)
    assert (fill.status, fill.shares) == ("CONFIRMED", Decimal(10))
    assert order_reconcile.reconcile_pending(older_than=timedelta(0)) == 0  # nothing left to follow


def test_a_delayed_order_that_cannot_fill_ends_cancelled(trader, make_trader,
                                                         make_sandbox_market, venue_control,
                                                         venue_clock):
    market = make_sandbox_market(liquidity=False)
    seller = _seller(make_trader, market, venue_control)
    _delay(venue_control, market, 3)
    placed = _place(trader, market.yes, "buy", "10", "market")
    assert Order.get(Order.order_hash == placed.order_id).status == "delayed"
    order_cancels.cancel_all(seller.user)  # the liquidity leaves during the delay
    venue_clock.advance(3)
    order = order_reconcile.reconcile(Order.get(Order.order_hash == placed.order_id).id)
    assert (order.status, order.filled_size) == ("cancelled", 0)
    assert Trade.get_by_id(placed.trade_id).status == "cancelled"
    assert venue_control.balances(trader.maker) == {
        "address": trader.maker, "pusd": "1000", "positions": {}}


def test_a_failed_trade_is_reversed_everywhere_it_counted(trader, make_trader,
                                                          make_sandbox_market, venue_control,
                                                          venue_clock):
    market = make_sandbox_market(liquidity=False)
    _seller(make_trader, market, venue_control)
    fail_next_trade(venue_control)
    placed = _place(trader, market.yes, "buy", "10", "market")
    assert placed.status == "matched" and placed.filled_size == Decimal(10)
    assert stats.user_summary(trader.user)["trade_count"] == 1
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    assert Trade.get_by_id(placed.trade_id).settlement == "matched"

    venue_clock.advance(1)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    trade = Trade.get_by_id(placed.trade_id)
    assert (trade.status, trade.settlement, trade.filled_size) == (
        "filled", "retrying", Decimal(10))

    venue_clock.advance(2)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    trade = Trade.get_by_id(placed.trade_id)
    assert (trade.status, trade.settlement, trade.failed_size) == (
        "failed", "failed", Decimal(10))
    assert (trade.filled_size, trade.filled_value) == (0, 0)
    order = Order.get_by_id(placed.trade_id)
    assert (order.status, order.filled_size) == ("matched", 0)
    # The ledger, the positions and the statistics no longer count it; the venue agrees.
    assert positions.ledger(trader.user)[market.yes].size == 0
    assert positions.ledger_drift(trader.user) == {}
    assert stats.user_summary(trader.user)["trade_count"] == 0
    assert venue_control.balances(trader.maker)["pusd"] == "1000"
    # Reconciling again changes nothing (the reversal happened once).
    order_reconcile.reconcile(order.id)
    assert Trade.get_by_id(placed.trade_id).failed_size == Decimal(10)


def test_the_empty_single_order_answer_is_understood(trader, market, venue_control):
    """``GET /data/order/<id>`` answers finished orders with an empty body: not malformed."""
    placed = _place(trader, market.yes, "buy", "10", "market")
    acct = venue_accounts.account(trader.user)
    assert venues.client().clob.order(acct.creds, placed.order_id) is None
    resting = _place(trader, market.yes, "buy", "5", "limit", "0.30")
    listed = venues.client().clob.order(acct.creds, resting.order_id)
    assert listed is not None and listed.is_live


# The client's timeout where the venue stalls: short, so the stall times out soon, yet long
# enough for every other answer (the lookups that resolve the order) on a busy machine.
IMPATIENT_SECONDS = 5.0


@pytest.fixture
def impatient_client(monkeypatch):
    """The runtime's venue client with a short timeout, so a stalled answer times out soon."""
    from services.platform.runtime import runtime
    from venue.client import VenueClient

    access = runtime().venue
    client = VenueClient(dataclasses.replace(access.config, timeout=IMPATIENT_SECONDS))
    monkeypatch.setattr(access, "_client", client)
    yield client
    client.close()


LOST_AFTER_SERVING = {
    "5xx": {"status": 502},
    "gateway_timeout": {"status": 504},
    # answered well after the client gave up
    "timeout": {"status": 0, "delay": 3 * IMPATIENT_SECONDS},
    "connection_reset": {"reset": True},
}


@pytest.mark.parametrize("fault", sorted(LOST_AFTER_SERVING))
def test_an_answer_lost_after_the_venue_took_the_order_is_resolved_at_once(
        fault, trader, market, venue_control, venue_clock, request, caplog):
    if fault == "timeout":  # the other faults lose the answer at once, with any client
        request.getfixturevalue("impatient_client")
    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "after": True, **LOST_AFTER_SERVING[fault]},
                       expect=201)
    placed = _place(trader, market.yes, "buy", "10", "market")
    assert "POST failed" in caplog.text  # the answer was indeed lost
    # Looked up through /data/orders and /data/trades right away: nothing waits for a 404.
    assert placed.status == "matched", placed
    order = Order.get(Order.order_hash == placed.order_id)
    assert (order.status, order.filled_size, order.filled_value) == (
        "matched", Decimal(10), Decimal("5.1"))
    assert Trade.get_by_id(placed.trade_id).status == "filled"
    assert venue_control.balances(trader.maker)["positions"] == {market.yes: "10"}
    assert [e["order_id"] for e in venue_control.received_orders()].count(
        placed.order_id) == 1  # sent once


def test_an_order_that_never_arrived_fails_after_the_grace(trader, market, venue_control,
                                                          venue_clock):
    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "status": 500}, expect=201)
    order, trade = _place_unanswered(trader, market.yes, "buy", "10", "market")
    assert order.status == "pending"
    grace = order_reconcile.not_found_grace().total_seconds()
    _sent_ago(order, grace + 1)
    assert order_reconcile.reconcile_pending(older_than=timedelta(0)) == 1
    assert Order.get_by_id(order.id).status == "failed"
    assert Trade.get_by_id(trade.id).status == "failed"


def test_an_unanswerable_order_is_closed_at_the_deadline(trader, market, venue_control,
                                                        venue_clock):
    """The POST and every lookup fail: the record still ends, at the deadline."""
    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "status": 500}, expect=201)
    venue_control.call("POST", "/faults", {"path": "/clob/data/", "status": 503,
                                           "count": 1000}, expect=201)
    order, trade = _place_unanswered(trader, market.yes, "buy", "10", "market")
    _sent_ago(order, order_reconcile.not_found_grace().total_seconds() + 1)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    assert Order.get_by_id(order.id).status == "pending"  # the venue cannot say yet
    _sent_ago(order, order_reconcile.resolve_deadline().total_seconds() + 1)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    order = Order.get_by_id(order.id)
    assert order.status == "failed" and "deadline" in order.error
    assert Trade.get_by_id(trade.id).status == "failed"


def test_an_order_still_delayed_at_the_deadline_is_kept_open_until_the_venue_matches_it(
        trader, market, venue_control, venue_clock):
    # While in its taker delay an order cannot be cancelled (ACCOUNTS.md §11): the deadline
    # does not close it as cancelled while the venue may still fill it.
    _delay(venue_control, market, 3600)
    placed = _place(trader, market.yes, "buy", "10", "market")
    order = Order.get(Order.order_hash == placed.order_id)
    assert order.status == "delayed"
    with pytest.raises(errors.BadRequest, match="taker delay"):
        order_cancels.cancel_order(trader.user, order.order_hash)
    _sent_ago(order, order_reconcile.resolve_deadline().total_seconds() + 1)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    assert Order.get_by_id(order.id).status == "delayed"
    acct = venue_accounts.account(trader.user)
    [listed] = venues.client().clob.open_orders(acct.creds, order_id=order.order_hash).orders
    assert listed.status.upper().endswith("DELAYED")
    venue_clock.advance(3600)  # the delay ends: the venue matches it
    order = order_reconcile.reconcile(order.id)
    assert (order.status, order.filled_size) == ("matched", Decimal(10))


def _data_calls() -> int:
    """/data/orders and /data/trades requests this process counted in its budgets' window."""
    budgets = venues.client().transport.budgets
    assert budgets is not None
    return budgets.used("clob_data_orders") + budgets.used("clob_data_trades")


@pytest.fixture
def still_budgets(monkeypatch):
    """The venue client's rate budgets on a clock that stands still: their 10 s windows no
    longer slide, so ``_data_calls`` counts every request since (on a busy machine, calls
    made while placing left the window between two counts). The clock moves only by what
    the client sleeps: a budget that is spent (the venue's rate-limit warning halves a
    signer's) is waited out, where a clock that never moved would wait forever."""
    from venue.budgets import RateBudgets

    client = venues.client()
    assert client.transport.budgets is not None
    clock = [time.monotonic()]

    def sleep(seconds: float) -> None:
        time.sleep(seconds)
        clock[0] += seconds

    monkeypatch.setattr(client.transport, "budgets", RateBudgets(
        client.config.rate_budget_share, clock=lambda: clock[0]))
    monkeypatch.setattr(client.transport, "_sleep", sleep)


def test_following_settlements_walks_each_accounts_trades_once(trader, market, venue_clock,
                                                               still_budgets):
    placed = [_place(trader, market.yes, "buy", "5", "market") for _ in range(6)]
    assert all(p.status == "matched" for p in placed)
    venue_clock.advance(2)  # MINED at the venue
    before = _data_calls()
    # none left to look up alone
    assert order_reconcile.reconcile_pending(older_than=timedelta(0)) == 0
    # One trades page for the account instead of two calls for each of the six orders.
    assert _data_calls() - before == 1
    assert {Trade.get_by_id(p.trade_id).settlement for p in placed} == {"mined"}
    assert OrderFill.select().where(OrderFill.status == "MINED").count() == 6

    venue_clock.advance(6)  # CONFIRMED
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    trades = [Trade.get_by_id(p.trade_id) for p in placed]
    assert {(t.settlement, t.status, t.filled_size) for t in trades} == {
        ("confirmed", "filled", Decimal(5))}
    assert all(t.settled_at is not None for t in trades)
    before = _data_calls()
    order_reconcile.reconcile_pending(older_than=timedelta(0))  # nothing settling: nothing asked
    assert _data_calls() == before


def test_a_fill_after_the_deadline_is_booked_late(trader, market, venue_control, venue_clock):
    """The venue took and filled the order, but nothing it said reached us by the deadline."""
    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "status": 500, "after": True}, expect=201)
    venue_control.call("POST", "/faults", {"path": "/clob/data/", "status": 503,
                                           "count": 1000}, expect=201)
    order, trade = _place_unanswered(trader, market.yes, "buy", "10", "market")
    _sent_ago(order, order_reconcile.resolve_deadline().total_seconds() + 1)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    assert Order.get_by_id(order.id).status == "failed"
    held = positions.ledger(trader.user).get(market.yes)
    assert held is None or held.size == 0

    venue_control.call("DELETE", "/faults", expect=200)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    order = Order.get_by_id(order.id)
    assert (order.status, order.filled_size) == ("matched", Decimal(10))
    assert "booked late" in order.error
    trade = Trade.get_by_id(trade.id)
    assert (trade.status, trade.filled_size, trade.settlement) == (
        "filled", Decimal(10), "matched")
    assert positions.ledger(trader.user)[market.yes].size == Decimal(10)
    assert positions.ledger_drift(trader.user) == {}
    assert stats.user_summary(trader.user)["trade_count"] == 1
    order_reconcile.reconcile_pending(older_than=timedelta(0))  # booked once
    assert Order.get_by_id(order.id).filled_size == Decimal(10)
    assert positions.ledger(trader.user)[market.yes].size == Decimal(10)


def test_only_orders_closed_at_the_deadline_are_followed_for_late_fills(
        trader, market, venue_control, venue_clock):
    """The sweep finds them by their column, not by what their error says."""
    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "status": 500, "count": 2}, expect=201)
    never, _ = _place_unanswered(trader, market.yes, "buy", "10", "market")
    _sent_ago(never, order_reconcile.not_found_grace().total_seconds() + 1)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    never = Order.get_by_id(never.id)
    assert never.status == "failed" and never.deadline_closed_at is None

    venue_control.call("POST", "/faults", {"path": "/clob/data/", "status": 503,
                                           "count": 1000}, expect=201)
    late, _ = _place_unanswered(trader, market.yes, "buy", "10", "market")
    _sent_ago(late, order_reconcile.resolve_deadline().total_seconds() + 1)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    late = Order.get_by_id(late.id)
    assert late.status == "failed" and late.deadline_closed_at is not None
    # A venue's words quoting the setting's name do not make an order one to follow.
    Order.update(error="(ORDER_RESOLVE_DEADLINE_SECONDS)").where(Order.id == never.id).execute()
    Order.update(error="edited").where(Order.id == late.id).execute()
    assert [o.id for o in order_fills.closed_at_deadline()] == [late.id]


def test_the_migration_dates_deadline_closes_recorded_before_the_column(trader, bound_db):
    """Orders closed at the deadline by an older release are still followed after upgrading."""
    from models.migrations import m0076_order_deadline_closed as m0076

    kept = dict(user=trader.user, maker_address=trader.address, token_id="1", side="buy",
                order_type="market", time_in_force="FAK", price=Decimal("0.5"),
                size=Decimal(1), signed_body="{}")
    old = Order.create(order_hash="0x" + "1" * 64, status="failed",
                       error="The venue did not know the order by the deadline "
                             "(ORDER_RESOLVE_DEADLINE_SECONDS).", **kept)
    other = Order.create(order_hash="0x" + "2" * 64, status="failed",
                         error="The order never reached the venue.", **kept)
    m0076.backfill(bound_db)
    assert Order.get_by_id(old.id).deadline_closed_at is not None
    assert Order.get_by_id(other.id).deadline_closed_at is None
    assert [o.id for o in order_fills.closed_at_deadline()] == [old.id]


def test_a_late_fill_books_the_fee_the_venue_charged(trader, market, venue_control,
                                                     venue_clock):
    """Booked late, a fill still carries its taker fee, as every other fill does."""
    venue_control.call("POST", f"/markets/{market.condition_id}/fees",
                       {"rate": "0.04", "exponent": 2}, expect=200)
    venues.client().cache.invalidate()
    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "status": 500, "after": True}, expect=201)
    venue_control.call("POST", "/faults", {"path": "/clob/data/", "status": 503,
                                           "count": 1000}, expect=201)
    order, _ = _place_unanswered(trader, market.yes, "buy", "10", "market")
    _sent_ago(order, order_reconcile.resolve_deadline().total_seconds() + 1)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    venue_control.call("DELETE", "/faults", expect=200)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    order = Order.get_by_id(order.id)
    charged = sum((Decimal(f.fee) for f in OrderFill.select().where(OrderFill.order == order)),
                  Decimal(0))
    assert order.status == "matched" and charged > 0
    assert order.fee == charged
