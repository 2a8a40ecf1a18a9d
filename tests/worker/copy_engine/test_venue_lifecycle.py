"""The copy engine meets the venue's order lifecycle: a copy on a delayed market fills
after the delay, and a copy whose venue trade FAILED is taken back out of the config."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from decimal import Decimal

import trio

from models.base import db
from models.copying import CopyPosition
from models.trading import Order, OrderFill, Trade
from services.copying import intents as copy_intents
from services.trading import order_reconcile
from tests.venue_lifecycle import delay_market, fail_next_trade
from tests.worker.copy_engine.conftest import STEADY, inject, intents_of, owned, settled, wait_for
from worker.copy_engine import store

# Rechecks often; reads no balance again meanwhile (the estimate is what is checked).
RECHECKING = dataclasses.replace(STEADY, recheck_seconds=0.2, recheck_after_seconds=0,
                                 wallet_refresh_seconds=300.0)


def _position(config) -> Decimal:
    with db.connection_context():
        row = CopyPosition.get_or_none(CopyPosition.config == config.id)
        return row.shares if row is not None else Decimal(0)


def _order(config) -> Order | None:
    with db.connection_context():
        return Order.get_or_none(Order.config_id == config.id)


def test_a_copy_on_a_delayed_market_fills_after_the_delay(run_engines, make_config, trader,
                                                          market, target, venue_control,
                                                          venue_clock):
    config = make_config(trader.user, target)
    delay_market(venue_control, market.condition_id, 5)

    async def scenario(engines):
        await owned(engines[0], target)

        def estimated() -> object:
            slot = engines[0].wallets.accounts.get(trader.user.id)
            return slot if slot is not None and slot.balance is not None else None

        # The copier's first estimate is read by the refresh loop, not before a fill (a fill
        # does not wait for a read): the test is about the estimate an open order keeps.
        await wait_for(estimated)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        order = await wait_for(lambda: (o := _order(config)) and o.status != "pending" and o)
        assert order.status == "delayed"  # not booked as a final unfilled "cancelled"
        [intent] = intents_of(config)
        assert intent.status == "sent" and _position(config) == 0
        # The copier's pUSD estimate keeps what the open order may still spend.
        slot = engines[0].wallets.accounts.get(trader.user.id)
        assert slot is not None and slot.balance is not None
        assert slot.balance <= Decimal(1000) - Decimal("5")
        venue_clock.advance(5)
        [intent] = await wait_for(lambda: [i for i in intents_of(config)
                                           if i.status == "filled"])
        assert intent.filled_size == Decimal(10)

    run_engines(scenario, settings=RECHECKING)
    assert _position(config) == Decimal(10)
    assert venue_control.balances(trader.address)["positions"] == {market.yes: "10"}
    order = _order(config)
    assert (order.status, order.filled_size) == ("matched", Decimal(10))


def test_a_failed_trade_on_a_copy_is_taken_out_of_the_configs_holding(
        run_engines, make_config, trader, market, target, venue_control, venue_clock):
    config = make_config(trader.user, target)
    fail_next_trade(venue_control)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        [intent] = await wait_for(settled(config))
        assert intent.status == "filled", (intent.reason, intent.detail)
        assert await trio.to_thread.run_sync(_position, config) == Decimal(10)

    run_engines(scenario)
    venue_clock.advance(3)
    with db.connection_context():
        order_reconcile.reconcile_pending(older_than=timedelta(0))  # the maintenance sweep
        order = Order.get(Order.config_id == config.id)
        trade = Trade.get(Trade.order == order.id)
    assert (trade.status, trade.settlement, trade.failed_size) == ("failed", "failed",
                                                                   Decimal(10))
    assert _position(config) == 0
    [intent] = intents_of(config)
    assert intent.filled_size == 0 and "FAILED" in intent.detail
    assert venue_control.balances(trader.address)["positions"] == {}
    with db.connection_context():  # a second sweep reverses nothing twice
        order_reconcile.reconcile_pending(older_than=timedelta(0))
    assert _position(config) == 0


def test_a_failed_sale_on_a_copy_restores_the_holding_and_its_realized_pnl_exactly(
        run_engines, make_config, trader, market, target, venue_control, venue_clock):
    config = make_config(trader.user, target)
    seen = {}

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(lambda: _position(config) == Decimal(10))
        bought = seen["bought"] = await trio.to_thread.run_sync(_holding, config)
        fail_next_trade(venue_control)
        await inject(venue_control, target, market.yes, "SELL", "10", "0.5")
        await wait_for(lambda: _position(config) == 0)
        sold = await trio.to_thread.run_sync(_holding, config)
        assert sold[2] != bought[2]  # the sale booked a realized PnL

    run_engines(scenario)
    bought = seen["bought"]
    venue_clock.advance(3)
    with db.connection_context():
        order_reconcile.reconcile_pending(older_than=timedelta(0))  # the maintenance sweep
        sale = Order.get(Order.config_id == config.id, Order.side.in_(("SELL", "sell")))
        assert Trade.get(Trade.order == sale.id).settlement == "failed"
    # Shares, cost basis and realized PnL as they were before the sale that never was.
    assert _holding(config) == bought
    with db.connection_context():  # a second sweep reverses nothing twice
        order_reconcile.reconcile_pending(older_than=timedelta(0))
    assert _holding(config) == bought


def _holding(config) -> tuple[Decimal, Decimal, Decimal]:
    with db.connection_context():
        row = CopyPosition.get(CopyPosition.config == config.id)
        return row.shares, row.cost_usdc, row.realized_pnl


def test_a_copy_filled_after_its_order_was_closed_is_booked_late(
        run_engines, make_config, trader, market, target, venue_control):
    config = make_config(trader.user, target)
    venue_control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                           "status": 500, "after": True}, expect=201)
    venue_control.call("POST", "/faults", {"path": "/clob/data/", "status": 503,
                                           "count": 100000}, expect=201)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(lambda: _order(config))  # sent; its answer lost, the venue unanswerable

    run_engines(scenario)
    with db.connection_context():
        order = _order(config)
        Order.update(submitted_at=order.submitted_at - order_reconcile.resolve_deadline()
                     - timedelta(seconds=1)).where(Order.id == order.id).execute()
        order_reconcile.reconcile_pending(older_than=timedelta(0))
        assert Order.get_by_id(order.id).status == "failed"
        [intent] = intents_of(config)
        copy_intents.reconcile(intent.id, intent.worker, 60.0)
    [intent] = intents_of(config)
    assert intent.status == "failed" and _position(config) == 0

    venue_control.call("DELETE", "/faults", expect=200)
    with db.connection_context():
        order_reconcile.reconcile_pending(older_than=timedelta(0))
        order_reconcile.reconcile_pending(older_than=timedelta(0))  # booked once
    [intent] = intents_of(config)
    assert (intent.status, intent.filled_size) == ("filled", Decimal(10))
    assert "booked late" in intent.detail
    assert _position(config) == Decimal(10)
    assert venue_control.balances(trader.address)["positions"] == {market.yes: "10"}


def _found_fills(order: Order) -> int:
    with db.connection_context():
        return OrderFill.select().where(OrderFill.order == order.id).count()


def test_a_delayed_copy_matched_as_two_trades_counts_both_everywhere(
        run_engines, make_config, trader, market, target, venue_control, venue_clock):
    """ACCOUNTS.md §12: no associate_trades, and the match shows as two trades 3 s apart.
    The copy's intent, the config's position and its budget count the whole match, at the
    prices and fee the venue charged."""
    venue_control.call("POST", f"/markets/{market.condition_id}/fees", {"rate": "0.04"},
                       expect=200)
    config = make_config(trader.user, target, total_budget_usdc=Decimal(100))
    delay_market(venue_control, market.condition_id, 5)
    venue_control.call("POST", "/lifecycle", {"associate_trades": False, "split_parts": 2,
                                              "split_every": 3}, expect=200)
    before = Decimal(venue_control.balances(trader.address)["pusd"])

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "20", "0.5")
        order = await wait_for(lambda: (o := _order(config)) and o.status != "pending" and o)
        assert order.status == "delayed"
        venue_clock.advance(5)  # matched whole: size_matched 20, one trade of 10 shown
        await wait_for(lambda: _found_fills(order) == 1)
        [intent] = intents_of(config)
        assert intent.status == "sent" and _position(config) == 0  # nothing booked on a guess
        venue_clock.advance(3)  # the second trade shows
        await wait_for(lambda: [i for i in intents_of(config) if i.status == "filled"])

    run_engines(scenario, settings=RECHECKING)
    order = _order(config)
    paid = before - Decimal(venue_control.balances(trader.address)["pusd"])
    fee = paid - order.filled_value
    assert (order.status, order.filled_size, order.fee) == ("matched", Decimal(20), fee)
    assert fee > 0 and _found_fills(order) == 2
    [intent] = intents_of(config)
    assert (intent.filled_size, intent.filled_size * intent.filled_price, intent.fee) == (
        Decimal(20), order.filled_value, fee)
    with db.connection_context():
        row = CopyPosition.get(CopyPosition.config == config.id)
        [snapshot] = store.load_configs([config.id])
    assert (row.shares, row.cost_usdc) == (Decimal(20), paid)  # the fee is in the cost
    assert snapshot.spent_total == paid
    assert venue_control.balances(trader.address)["positions"] == {market.yes: "20"}
