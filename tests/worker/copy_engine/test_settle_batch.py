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


def _post(engine, configs, market, quote, key: str, sizes) -> list[copy_execution.Ticket]:
    """A fill's copies for ``configs`` planned, recorded and posted (answers not settled)."""
    rows = [dataclasses.replace(
        _row(engine, c, market.yes, key, size=size), condition_id=market.condition_id,
        market_slug=market.slug, outcome="Yes") for c, size in zip(configs, sizes, strict=True)]
    tickets = [copy_execution.Ticket(row) for row in rows]
    copy_execution.prepare(tickets, quote, engine.wallets.accounts)
    assert copy_execution.record(rows, tickets, quote) == rows
    for ticket in tickets:
        assert ticket.prepared is not None
        ticket.sent_at = utcnow()
        ticket.answer = orders.post(ticket.prepared)
    return tickets


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
                tickets = _post(engine, configs, market, quote, key,
                                [str(5 + i) for i in range(len(configs))])
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


def _sent_fill(engine, configs, market, sizes) -> list[copy_execution.Ticket]:
    """One fill's copies for ``configs``, recorded and posted (answers not yet settled)."""
    async def main() -> list[copy_execution.Ticket]:
        engine.venue = venues.async_client()
        try:
            await engine.wallets.open(list({c.user_id for c in configs}))
            quote = await engine.quotes.quote(market.yes)
            key = f"0x{secrets.token_hex(8)}|{market.yes}|BUY|fill"
            return _post(engine, configs, market, quote, key, sizes)
        finally:
            await engine.venue.aclose()

    return trio.run(main)


def _statements(monkeypatch) -> list[str]:
    """Every SQL statement the bound database runs from now on (the text, as sent)."""
    database = db.obj
    seen: list[str] = []
    run = database.execute_sql

    def counted(sql, params=None, *args, **kwargs):
        seen.append(sql)
        return run(sql, params, *args, **kwargs)

    monkeypatch.setattr(database, "execute_sql", counted)
    return seen


def test_a_fills_orders_settle_in_one_statement_and_their_trades_in_one_more(
        bound_db, make_config, make_trader, market, target, redis_url, engine_prefix,
        monkeypatch):
    configs = [make_config(make_trader().user, target) for _ in range(4)]
    engine = _engine(redis_url, engine_prefix)
    tickets = _sent_fill(engine, configs, market, ["5", "6", "7", "8"])
    seen = _statements(monkeypatch)
    copy_execution.settle(tickets)
    monkeypatch.undo()
    assert len([s for s in seen if s.startswith('UPDATE "orders"')]) == 1
    assert len([s for s in seen if s.startswith('UPDATE "trades"')]) == 1
    # The intents written and named in one guarded statement, not read and locked first.
    assert len([s for s in seen if s.startswith('UPDATE "copy_intents"')]) == 1
    assert not [s for s in seen if s.startswith("SELECT") and '"copy_intents"' in s]
    for ticket in tickets:  # each order took its own answer
        assert ticket.order is not None
        order, trade = Order.get_by_id(ticket.order.id), Trade.get_by_id(ticket.order.id)
        assert (order.status, order.filled_size) == ("matched", ticket.draft.size)
        assert order.acknowledged_at is not None and order.ack_ms is not None
        assert (trade.status, trade.filled_size, trade.filled_value, trade.fee) == (
            "filled", order.filled_size, order.filled_value, order.fee)
        assert CopyIntent.get_by_id(ticket.draft.id).status == "filled"


def test_a_batch_of_orders_where_one_lost_its_race_writes_the_others_and_keeps_the_winner(
        bound_db, make_config, make_trader, market, target, redis_url, engine_prefix):
    from services.trading import order_states

    configs = [make_config(make_trader().user, target) for _ in range(3)]
    engine = _engine(redis_url, engine_prefix)
    tickets = _sent_fill(engine, configs, market, ["5", "6", "7"])
    recorded = [t.order for t in tickets]
    # Another process failed the second order first: a final status is never replaced.
    [failed] = order_states.finish_many([order_states.Finish(recorded[1], "failed",
                                                             error="never reached")])
    stored = order_states.finish_many([
        order_states.Finish(order, "matched", filled_size=Decimal(size),
                            filled_value=Decimal(size) / 2, fee=Decimal("0.01"),
                            acknowledged=True, timings={"ack_ms": 7})
        for order, size in zip(recorded, ("5", "6", "7"), strict=True)])
    assert [order.id for order in stored] == [order.id for order in recorded]  # in order
    assert [order.status for order in stored] == ["matched", "failed", "matched"]
    assert stored[1].error == "never reached" and stored[1].filled_size == 0
    assert stored[1].ack_ms is None and stored[0].ack_ms == 7
    assert failed.status == "failed"
    for order in stored:
        trade = Trade.get_by_id(order.id)
        assert trade.status == ("failed" if order.status == "failed" else "filled")
        assert trade.filled_value == Order.get_by_id(order.id).filled_value


def test_a_settlement_cut_between_statements_leaves_nothing_and_reconciliation_finishes_it(
        bound_db, make_config, make_trader, market, target, redis_url, engine_prefix,
        monkeypatch):
    """A fault after the orders' statement (at their trades) and one after the intents'
    (at the positions): the batch's transaction leaves no order, trade, intent or position
    written; the reconciler then finds the orders pending, looks them up at the venue by
    hash and settles each copy once."""
    from services.trading import order_states

    configs = [make_config(make_trader().user, target) for _ in range(3)]
    engine = _engine(redis_url, engine_prefix)
    for cut in ("trades", "positions"):
        tickets = _sent_fill(engine, configs, market, ["5", "6", "7"])

        def fault(*args, cut=cut, **kwargs):
            raise RuntimeError(f"cut at the {cut}")

        if cut == "trades":
            monkeypatch.setattr(order_states, "update_rows", fault)
        else:
            monkeypatch.setattr(copy_positions, "apply_positions", fault)
        try:
            copy_execution.settle(tickets)
        except RuntimeError as exc:
            assert str(exc) == f"cut at the {cut}"
        else:
            raise AssertionError("the fault did not stop the settlement")
        monkeypatch.undo()
        for ticket in tickets:
            assert ticket.order is not None
            order, trade = Order.get_by_id(ticket.order.id), Trade.get_by_id(ticket.order.id)
            assert (order.status, order.filled_size, order.acknowledged_at) == (
                "pending", 0, None), cut
            assert (trade.status, trade.filled_size) == ("pending", 0), cut
            assert CopyIntent.get_by_id(ticket.draft.id).status == "pending", cut
    held = {config.id: _position_or_none(config.id, market.yes) for config in configs}
    assert held == {config.id: None for config in configs}
    # Recovery: each engine's reconciliation of its open intents, twice over (the second
    # finds them settled and moves nothing).
    for _ in range(2):
        for intent in CopyIntent.select().where(CopyIntent.config.in_([c.id for c in configs])):
            copy_intents.reconcile(intent.id, intent.worker, stale_after=600)
    for config in configs:
        intents = list(CopyIntent.select().where(CopyIntent.config == config.id))
        assert [intent.status for intent in intents] == ["filled", "filled"]
        found = [Order.get(Order.target_trade_id == str(intent.id)) for intent in intents]
        assert all(order.status == "matched" for order in found)
        assert all(Trade.get_by_id(order.id).status == "filled" for order in found)
        position = _position(config.id, market.yes)
        assert position.shares == sum(order.filled_size for order in found)
        assert position.cost_usdc == sum(order.filled_value + order.fee for order in found)


def _position_or_none(config_id, token: str) -> CopyPosition | None:
    return CopyPosition.get_or_none(CopyPosition.config == config_id,
                                    CopyPosition.token_id == token)
