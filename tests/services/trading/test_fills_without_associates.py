"""An order's fills found in /data/trades, not in its ``associate_trades`` (ACCOUNTS.md §12).

From 2026-12-14 "an empty associate_trades tuple does not mean an order has no fills":
the sandbox leaves it empty here (its ``associate_trades`` switch), and shows a match as
several trades appearing seconds apart (``split_parts``/``split_every``). Every fill of
an order is still booked exactly, once, from the venue's trades.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from types import SimpleNamespace

import pytest

from models.trading import Order, OrderFill, Trade
from services.platform import venues
from services.trading import order_reconcile, orders, positions, previews
from services.wallets import venue_accounts
from tests.venue_lifecycle import delay_market


@pytest.fixture
def no_associates(venue_control, venue_clock) -> None:
    """Orders list no trades (put back with the clock's switches)."""
    venue_control.call("POST", "/lifecycle", {"associate_trades": False}, expect=200)


def _place(trader, token, side, size, kind, price=None):
    """What placing answers (PlaceOrderResponse's fields, the status as stored)."""
    quote = previews.create(trader.user, token, side, size, kind, price)
    return SimpleNamespace(**orders.placed_view(orders.place_order(
        trader.user, token_id=token, side=side, size=size, order_type=kind, price=price,
        preview_id=quote["preview_id"])))


def _resting_sell(make_trader, venue_control, token: str, price: str, size: str) -> None:
    seller = make_trader("0")
    venue_control.grant(seller.maker, token, size)
    _place(seller, token, "sell", size, "limit", price)


def _market_sell(make_trader, venue_control, token: str, size: str) -> None:
    seller = make_trader("0")
    venue_control.grant(seller.maker, token, size)
    assert _place(seller, token, "sell", size, "market").status == "matched"


def _pusd(venue_control, address: str) -> Decimal:
    return Decimal(venue_control.balances(address)["pusd"])


def _fills(order: Order) -> list[tuple[Decimal, Decimal, Decimal]]:
    rows = OrderFill.select().where(OrderFill.order == order.id).order_by(OrderFill.id)
    return sorted((row.shares, row.value, row.fee) for row in rows)


def test_a_gtc_order_filled_in_three_parts_is_booked_exactly(
        trader, make_trader, make_sandbox_market, venue_control, venue_clock, no_associates):
    market = make_sandbox_market(liquidity=False, fee_rate="0.04")
    _resting_sell(make_trader, venue_control, market.yes, "0.48", "10")
    before = _pusd(venue_control, trader.maker)
    # Takes the 10 offered at 0.48 (a taker: it pays the fee), rests 20 at 0.50.
    placed = _place(trader, market.yes, "buy", "30", "limit", "0.50")
    order = Order.get(Order.order_hash == placed.order_id)
    assert (order.status, order.filled_size) == ("live", Decimal(10))

    _market_sell(make_trader, venue_control, market.yes, "10")  # part two, as maker
    order_reconcile.sync_user_orders(trader.user)
    venue_clock.advance(6)  # parts one and two settle: CONFIRMED
    order_reconcile.sync_user_orders(trader.user)  # resting orders: refreshed as listed
    assert Trade.get(Trade.order == order.id).settlement == "confirmed"

    _market_sell(make_trader, venue_control, market.yes, "10")  # part three, as maker
    order_reconcile.sync_user_orders(trader.user)
    order = Order.get_by_id(order.id)
    charged = before - _pusd(venue_control, trader.maker) - order.filled_value
    assert (order.status, order.filled_size, order.filled_value) == (
        "matched", Decimal(30), Decimal("14.8"))  # 10 x 0.48 + 20 x 0.50
    assert charged == Decimal("0.09984") and order.fee == charged  # 10 x 0.04 x 0.48 x 0.52
    assert _fills(order) == [(Decimal(10), Decimal("4.8"), charged),
                             (Decimal(10), Decimal(5), Decimal(0)),
                             (Decimal(10), Decimal(5), Decimal(0))]
    trade = Trade.get(Trade.order == order.id)
    # Part three has only matched: the order is not settled yet, whatever one and two say.
    assert (trade.status, trade.filled_size, trade.settlement, trade.settled_at) == (
        "filled", Decimal(30), "matched", None)
    assert positions.ledger(trader.user)[market.yes].size == Decimal(30)

    venue_clock.advance(6)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    assert Trade.get(Trade.order == order.id).settlement == "confirmed"


def test_a_delayed_fok_matched_as_two_trades_is_booked_when_both_are_found(
        trader, make_trader, make_sandbox_market, venue_control, venue_clock, no_associates):
    market = make_sandbox_market(liquidity=False, fee_rate="0.04")
    _resting_sell(make_trader, venue_control, market.yes, "0.50", "10")
    _resting_sell(make_trader, venue_control, market.yes, "0.52", "10")
    delay_market(venue_control, market.condition_id, 3)
    venue_control.call("POST", "/lifecycle", {"split_parts": 2, "split_every": 2}, expect=200)
    before = _pusd(venue_control, trader.maker)
    placed = _place(trader, market.yes, "buy", "20", "market")
    order = Order.get(Order.order_hash == placed.order_id)
    assert (placed.status, order.status, order.time_in_force) == ("delayed", "delayed", "FOK")

    venue_clock.advance(3)  # matched whole; /data/trades shows its first trade only
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    acct = venue_accounts.account(trader.user)
    [listed] = venues.client().clob.open_orders(acct.creds, order_id=order.order_hash).orders
    assert (listed.status, listed.size_matched, listed.associate_trades) == (
        "MATCHED", Decimal(20), ())
    order = Order.get_by_id(order.id)
    # Nothing booked from a guess while half the match is not found: still open.
    assert (order.status, order.filled_size, order.filled_value) == ("delayed", 0, 0)
    assert _fills(order) == [(Decimal(10), Decimal(5), Decimal("0.1"))]

    venue_clock.advance(2)  # the second trade appears
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    order = Order.get_by_id(order.id)
    charged = before - _pusd(venue_control, trader.maker) - order.filled_value
    assert (order.status, order.filled_size, order.filled_value) == (
        "matched", Decimal(20), Decimal("10.2"))
    assert charged == Decimal("0.19984") and order.fee == charged
    assert _fills(order) == [(Decimal(10), Decimal(5), Decimal("0.1")),
                             (Decimal(10), Decimal("5.2"), Decimal("0.09984"))]
    trade = Trade.get(Trade.order == order.id)
    assert (trade.status, trade.filled_size, trade.filled_value, trade.fee) == (
        "filled", Decimal(20), Decimal("10.2"), charged)
    assert positions.ledger(trader.user)[market.yes].size == Decimal(20)
    assert venue_control.balances(trader.maker)["positions"] == {market.yes: "20"}


def test_a_split_match_keeps_its_settlement_open_until_every_trade_is_found(
        trader, make_trader, make_sandbox_market, venue_control, venue_clock, no_associates):
    """A FOK filled at once, its match shown as two trades 10 s apart: the second trade's
    settlement is followed too, not left out once the first is CONFIRMED."""
    market = make_sandbox_market(liquidity=False)
    _resting_sell(make_trader, venue_control, market.yes, "0.50", "20")
    venue_control.call("POST", "/lifecycle", {"split_parts": 2, "split_every": 10},
                       expect=200)
    placed = _place(trader, market.yes, "buy", "20", "market")
    assert (placed.status, placed.filled_size) == ("matched", Decimal(20))
    order = Order.get(Order.order_hash == placed.order_id)
    venue_clock.advance(6)  # the first trade is CONFIRMED; the second not shown yet
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    trade = Trade.get(Trade.order == order.id)
    assert (trade.settlement, trade.settled_at) == ("matched", None)
    venue_clock.advance(4)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    assert _fills(Order.get_by_id(order.id)) == [(Decimal(10), Decimal(5), Decimal(0))] * 2
    venue_clock.advance(6)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    trade = Trade.get(Trade.order == order.id)
    assert (trade.settlement, trade.filled_size) == ("confirmed", Decimal(20))
    assert trade.settled_at is not None
