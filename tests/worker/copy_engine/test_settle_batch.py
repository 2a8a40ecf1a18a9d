"""Settling a fill's copies in one batch: intents, orders and positions exactly as one by one.

Against the shared sandbox venue over real HTTP and both databases.
"""

from __future__ import annotations

import dataclasses
import secrets
from datetime import timedelta
from decimal import Decimal

import trio

from models.base import db, utcnow
from models.copying import CopyIntent, CopyPosition
from models.trading import Order, Trade
from services.copying import execution as copy_execution
from services.copying import intents as copy_intents
from services.copying.mirror import Holding
from services.platform import venues
from services.trading import copy_positions, order_reconcile, orders
from tests.worker.copy_engine.test_fast_path import _engine, _row


def _position(config_id, token: str, paper: bool = False) -> CopyPosition:
    return CopyPosition.get(CopyPosition.config == config_id, CopyPosition.token_id == token,
                            CopyPosition.paper == paper)


def test_a_fills_copies_settle_together_and_a_reconciled_order_keeps_its_record(
        bound_db, make_config, make_trader, market, target, redis_url, engine_prefix):
    traders = [make_trader() for _ in range(3)]
    configs = [make_config(t.user, target) for t in traders]
    engine = _engine(redis_url, engine_prefix)
    fills: list[list[copy_execution.Ticket]] = []
    reconciled: list[Order] = []
    first_fills: list = []

    async def main():
        engine.venue = venues.async_client()
        try:
            await engine.wallets.open([t.user.id for t in traders])
            quote = await engine.quotes.quote(market.yes)
            for number in range(2):
                key = f"0x{secrets.token_hex(8)}|{market.yes}|BUY|{target}"
                rows = [dataclasses.replace(
                    _row(engine, c, market.yes, key, size=str(5 + i)),
                    condition_id=market.condition_id, market_slug=market.slug, outcome="Yes")
                    for i, c in enumerate(configs)]
                tickets = [copy_execution.Ticket(row) for row in rows]
                copy_execution.prepare(tickets, quote, engine.wallets.accounts)
                assert copy_execution.record(rows, tickets, quote) == rows
                for ticket in tickets:
                    assert ticket.prepared is not None
                    ticket.sent_at = utcnow()
                    ticket.answer = orders.post(ticket.prepared)
                if number == 0:  # the reconciler looked the first order up meanwhile
                    first = tickets[0]
                    assert first.order is not None and first.prepared is not None
                    reconciled.append(order_reconcile.reconcile(first.order.id,
                                                       acct=first.prepared.acct))
                    first_fills.append(Trade.get_by_id(first.order.id).filled_at)
                copy_execution.settle(tickets)
                fills.append(tickets)
        finally:
            await engine.venue.aclose()

    trio.run(main)
    held = {config.id: Holding() for config in configs}
    for tickets in fills:
        for ticket in tickets:
            assert ticket.order is not None and ticket.outcome is not None
            order = Order.get_by_id(ticket.order.id)
            intent = CopyIntent.get_by_id(ticket.draft.id)
            assert order.status == "matched" and order.filled_size == ticket.draft.size
            assert (intent.status, intent.order_id, intent.trade_id) == (
                "filled", order.order_hash, order.id)
            assert (intent.filled_size, intent.fee) == (order.filled_size, order.fee)
            assert intent.filled_price == order.filled_value / order.filled_size
            assert intent.latency_ms == int((ticket.sent_at - ticket.draft.seen_at)
                                            .total_seconds() * 1000)
            trade = Trade.get_by_id(order.id)
            assert (trade.status, trade.filled_size, trade.filled_value) == (
                "filled", order.filled_size, order.filled_value)
            config_id = ticket.draft.config_id
            before = held[config_id]
            held[config_id] = Holding(before.shares + order.filled_size,
                                      before.cost_usdc + order.filled_value)
            assert ticket.holding == held[config_id] and ticket.opened == 1
    for config in configs:
        position = _position(config.id, market.yes)
        assert Holding(position.shares, position.cost_usdc) == held[config.id]
        assert (position.opened, position.realized_pnl) == (1, 0)
        assert (position.condition_id, position.market_slug, position.outcome) == (
            market.condition_id, market.slug, "Yes")
    # The answer recorded after the reconciliation kept its acknowledgement and first fill.
    [early], [first_fill] = reconciled, first_fills
    assert early.acknowledged_at is not None and first_fill is not None
    assert Order.get_by_id(early.id).acknowledged_at == early.acknowledged_at
    assert Trade.get_by_id(early.id).filled_at == first_fill
    assert Order.select().where(Order.config_id.in_([c.id for c in configs])).count() == 6


def test_positions_applied_in_one_batch_equal_one_at_a_time(bound_db, make_config, trader,
                                                           target):
    batched, single = make_config(trader.user, target), make_config(trader.user, target)
    live, other = f"{secrets.randbits(200)}", f"{secrets.randbits(200)}"
    # (paper, token, side, shares, usdc): opened, added to, sold past zero, opened again;
    # a paper position and a second token in between; amounts with many decimal places.
    moves = [(False, live, "BUY", "10", "5.3"), (True, live, "BUY", "7", "3.5"),
             (False, live, "BUY", "3.333333", "1.7777777"),
             (False, other, "BUY", "1.5", "0.75"), (False, live, "SELL", "4", "2.9"),
             (False, live, "SELL", "100", "6.0000001"), (False, live, "BUY", "2", "1.1"),
             (False, other, "SELL", "0.5", "0.3")]
    for config in (batched, single):  # a position stored before the batch
        copy_positions.apply_position(config.id, False, other, "BUY", Decimal("2.25"), Decimal("1"),
                             condition_id="0xc", market_slug="slug", outcome="Yes")

    results = copy_positions.apply_positions([
        copy_positions.PositionFill(batched.id, paper, token, side, Decimal(shares), Decimal(usdc),
                           condition_id="0xc", market_slug="slug", outcome="Yes")
        for paper, token, side, shares, usdc in moves])
    expected = [copy_positions.apply_position(single.id, paper, token, side, Decimal(shares),
                                     Decimal(usdc), condition_id="0xc", market_slug="slug",
                                     outcome="Yes")
                for paper, token, side, shares, usdc in moves]

    assert results == expected
    assert [opened for _, opened in results] == [1, 1, 1, 1, 1, 1, 2, 1]
    for paper, token in ((False, live), (True, live), (False, other)):
        mine, theirs = _position(batched.id, token, paper), _position(single.id, token, paper)
        for name in ("shares", "cost_usdc", "realized_pnl"):  # the stored text, exactly
            assert str(getattr(mine, name)) == str(getattr(theirs, name)), name
        for name in ("opened", "condition_id", "market_slug", "outcome"):
            assert getattr(mine, name) == getattr(theirs, name), name
    assert _position(batched.id, live).realized_pnl != 0


def test_intents_settled_together_keep_each_outcome_exactly(bound_db, make_config, trader,
                                                           target, redis_url, engine_prefix):
    config = make_config(trader.user, target)
    engine = _engine(redis_url, engine_prefix)
    rows = [_row(engine, config, "1234", f"fill-{i}") for i in range(4)]
    assert copy_intents.insert(rows) == rows
    now = utcnow()
    outcomes = [
        {"status": "filled", "sent_at": now, "latency_ms": 12, "order_id": "0x" + "ab" * 32,
         "trade_id": rows[0].id, "filled_size": Decimal("10.123456789"),
         "filled_price": Decimal("0.51230000"), "fee": Decimal("0.000001"),
         "settled_at": now + timedelta(milliseconds=3)},
        {"status": "failed", "sent_at": now, "latency_ms": 9, "order_id": None,
         "trade_id": None, "reason": "insufficient_balance",
         "detail": "not enough balance / allowance", "settled_at": now},
        {"status": "filled", "sent_at": now, "latency_ms": 0, "order_id": "0x" + "cd" * 32,
         "trade_id": rows[2].id, "filled_size": Decimal(0), "filled_price": None,
         "fee": Decimal(0), "settled_at": now},
        {"status": "sent", "sent_at": now, "latency_ms": 40},
    ]
    copy_intents.settle_many([(row.id, changes) for row, changes in zip(rows, outcomes,
                                                                        strict=True)])
    with db.connection_context():
        for row, changes in zip(rows, outcomes, strict=True):
            intent = CopyIntent.get_by_id(row.id)
            for name, value in changes.items():
                assert getattr(intent, name) == value, name
                if isinstance(value, Decimal):
                    assert str(getattr(intent, name)) == str(value), name
            assert intent.size == row.size and intent.target_trade_key == row.target_trade_key
