"""The copy fast path: batched intents and order records, concurrent sends, open accounts.

Against the shared sandbox venue over real HTTP, real Redis and both databases; the only
fault injected is a real one (an order record that collides with one already stored).
"""

from __future__ import annotations

import dataclasses
import secrets
from decimal import Decimal

import peewee
import pytest
import redis
import trio
from eth_account import Account

from models.base import db
from models.copying import CopyConfig
from models.trading import Order, Trade
from services.copying import execution as copy_execution
from services.copying.intents import CopyIntentDraft
from services.copying.mirror import Decision
from services.platform import venues
from tests.conftest import DEADLINE
from tests.worker.copy_engine.conftest import (
    FAST,
    inject,
    intents_of,
    owned,
    settled,
    wait_for,
)
from worker.copy_engine import store
from worker.copy_engine.engine import CopyEngine


def _sent_by(venue_control, address: str) -> list[dict]:
    return [e for e in venue_control.received_orders()
            if e["body"]["order"]["maker"].lower() == address.lower()]


def test_one_fill_fans_out_to_one_order_per_config_recorded_before_it_is_sent(
        run_engines, make_config, make_trader, market, target, venue_control):
    traders = [make_trader() for _ in range(4)]
    configs = [make_config(t.user, target) for t in traders]

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        for config in configs:
            await wait_for(settled(config))

    run_engines(scenario)
    for trader, config in zip(traders, configs, strict=True):
        [intent] = intents_of(config)
        assert intent.status == "filled", (intent.reason, intent.detail)
        [sent] = _sent_by(venue_control, trader.address)
        assert sent["order_id"] == intent.order_id
        with db.connection_context():
            [order] = Order.select().where(Order.config_id == config.id)
            assert order.target_trade_id == str(intent.id)
            # The durable record existed before the order left.
            assert order.submitted_at <= intent.sent_at
            assert sent["received_at"] >= int(order.submitted_at.timestamp() * 1000)
            assert Trade.get_by_id(intent.trade_id).order_id == order.id


def _row(engine: CopyEngine, config, token: str, key: str, size: str = "5"
         ) -> CopyIntentDraft:
    """An intent draft as the engine writes it, for a copy of ``size`` shares."""
    from models.base import utcnow

    snapshot = store.load_configs([config.id])[0]
    decision = Decision(action="copy", token_id=token, side="BUY", size=Decimal(size),
                        price=Decimal("0.55"), usdc=Decimal("2.75"))
    return engine.executor.draft(snapshot, None, decision, utcnow(), "mirror", key)


def _engine(redis_url: str, engine_prefix: str) -> CopyEngine:
    return CopyEngine(f"test-{secrets.token_hex(3)}", redis.Redis.from_url(redis_url),
                      engine_prefix, FAST)


def test_intents_and_their_order_records_are_written_all_or_nothing(
        bound_db, make_config, trader, market, target, redis_url, engine_prefix):
    config = make_config(trader.user, target)
    engine = _engine(redis_url, engine_prefix)

    async def main():
        engine.venue = venues.async_client()
        try:
            await engine.wallets.open([trader.user.id])
            quote = await engine.quotes.quote(market.yes)
            first = [_row(engine, config, market.yes, "fill-1")]
            tickets = [copy_execution.Ticket(first[0])]
            copy_execution.prepare(tickets, quote, engine.wallets.accounts)
            assert copy_execution.record(first, tickets, quote) == first
            # A second fill whose order record collides with the stored one (same signed
            # order): the transaction fails, and the second fill's intent is not kept.
            second = [_row(engine, config, market.yes, "fill-2")]
            again = [copy_execution.Ticket(second[0], prepared=tickets[0].prepared)]
            with pytest.raises(peewee.IntegrityError):
                copy_execution.record(second, again, quote)
        finally:
            await engine.venue.aclose()

    trio.run(main)
    keys = [i.target_trade_key for i in intents_of(config)]
    assert keys == ["fill-1"]
    with db.connection_context():
        assert Order.select().where(Order.config_id == config.id).count() == 1


def test_concurrent_batches_of_one_fill_send_one_order_per_config(
        bound_db, make_config, make_trader, market, target, redis_url, engine_prefix,
        venue_control):
    traders = [make_trader() for _ in range(3)]
    configs = [make_config(t.user, target) for t in traders]
    engine = _engine(redis_url, engine_prefix)
    snapshots = {s.id: s for s in store.load_configs([c.id for c in configs])}

    async def main():
        engine.venue = venues.async_client()
        try:
            await engine.wallets.open([t.user.id for t in traders])
            quote = await engine.quotes.quote(market.yes)
            key = f"0x{secrets.token_hex(8)}|{market.yes}|BUY|{target}"
            batches = [[_row(engine, c, market.yes, key) for c in configs] for _ in range(3)]
            async with trio.open_nursery() as nursery:
                for rows in batches:  # the same target trade decided three times at once
                    nursery.start_soon(engine.executor.execute, snapshots, rows, quote)
        finally:
            await engine.venue.aclose()

    trio.run(main)
    for trader, config in zip(traders, configs, strict=True):
        [intent] = intents_of(config)
        assert intent.status == "filled", (intent.reason, intent.detail)
        assert len(_sent_by(venue_control, trader.address)) == 1
        with db.connection_context():
            assert Order.select().where(Order.config_id == config.id).count() == 1


def test_a_stale_short_estimate_is_checked_at_the_venue_and_a_real_shortage_skips(
        run_engines, make_config, make_trader, market, target, venue_control):
    late = make_trader(funds="0")    # funded only after the engine read its balance
    poor = make_trader(funds="3")    # cannot pay 10 shares at ~0.51
    late_config = make_config(late.user, target)
    poor_config = make_config(poor.user, target)
    seen: dict[str, Decimal | None] = {}

    async def scenario(engines):
        engine = engines[0]
        await owned(engine, target)
        slot = engine.wallets.accounts.get(late.user.id)
        seen["before"] = slot.available if slot else None
        venue_control.fund(late.address, "100")  # a deposit the estimate has not seen
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(settled(late_config))
        await wait_for(settled(poor_config))

    run_engines(scenario, settings=dataclasses.replace(FAST, wallet_refresh_seconds=300.0))
    assert seen["before"] == Decimal(0)
    [copied] = intents_of(late_config)
    assert copied.status == "filled", (copied.reason, copied.detail)
    [skipped] = intents_of(poor_config)
    assert (skipped.status, skipped.reason) == ("skipped", "insufficient_balance")
    assert _sent_by(venue_control, poor.address) == []


def test_opened_accounts_live_only_while_their_configs_run_here(
        run_engines, make_config, make_trader, market, target, venue_control):
    trader, other = make_trader(), make_trader()
    config = make_config(trader.user, target)
    make_config(other.user, target, paper_trading=True)  # paper: no account opened
    kept: dict[str, object] = {}

    async def scenario(engines):
        engine = engines[0]
        kept["engine"] = engine
        await owned(engine, target)
        slot = engine.wallets.accounts.get(trader.user.id)
        assert slot is not None and slot.account.maker == trader.address
        secret = slot.account.private_key.removeprefix("0x")
        assert secret not in repr(slot) and secret not in repr(slot.account.key)
        assert other.user.id not in engine.wallets.accounts
        with db.connection_context():
            CopyConfig.update(is_active=False).where(CopyConfig.id == config.id).execute()
        engine.wake()

        def dropped() -> bool:
            return trader.user.id not in engine.wallets.accounts
        await wait_for(dropped)

    run_engines(scenario)
    assert len(kept["engine"].wallets.accounts) == 0  # nothing stays open once the engine stopped


def test_targets_starting_together_open_a_shared_copiers_account_once(
        run_engines, make_config, make_trader, venue_control):
    """A copier of many targets: their watchers start concurrently, and the account is
    opened and its balance read once, every target waiting for it before it runs."""
    trader = make_trader()
    targets = [Account.create().address.lower() for _ in range(6)]
    for address in targets:
        make_config(trader.user, address)
    venue_control.call("DELETE", "/requests", expect=200)

    async def scenario(engines):
        engine = engines[0]
        for address in targets:
            await owned(engine, address)
            assert engine.wallets.accounts.get(trader.user.id) is not None

    run_engines(scenario, settings=dataclasses.replace(FAST, wallet_refresh_seconds=300.0))
    tally = venue_control.call("GET", "/requests", expect=200)
    assert sum(tally["GET /clob/balance-allowance"].values()) == 1


def test_the_place_limiter_bounds_the_orders_in_flight(
        bound_db, make_config, make_trader, market, target, redis_url, engine_prefix):
    traders = [make_trader() for _ in range(3)]
    configs = [make_config(t.user, target) for t in traders]
    engine = _engine(redis_url, engine_prefix)
    peaks: dict[int, int] = {}

    async def send(ticket: copy_execution.Ticket) -> None:
        assert ticket.prepared is not None
        ticket.sent_at, ticket.answer = await engine.executor.send(ticket.prepared)

    async def send_all(tickets: list[copy_execution.Ticket], tokens: int) -> None:
        limiter = engine.executor.place_limiter = trio.CapacityLimiter(tokens)
        done = trio.Event()

        async def watch() -> None:  # samples the sends in flight at every scheduler pass
            while not done.is_set():
                peaks[tokens] = max(peaks.get(tokens, 0), limiter.borrowed_tokens)
                await trio.sleep(0)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            async with trio.open_nursery() as sends:
                for ticket in tickets:
                    sends.start_soon(send, ticket)
            done.set()
        assert limiter.borrowed_tokens == 0  # every slot given back

    async def main():
        engine.venue = venues.async_client()
        try:
            await engine.wallets.open([t.user.id for t in traders])
            quote = await engine.quotes.quote(market.yes)
            for tokens in (1, 3):
                rows = [_row(engine, c, market.yes, f"fill-{tokens}") for c in configs]
                tickets = [copy_execution.Ticket(row) for row in rows]
                copy_execution.prepare(tickets, quote, engine.wallets.accounts)
                assert copy_execution.record(rows, tickets, quote) == rows
                with trio.fail_after(DEADLINE):
                    await send_all(tickets, tokens)
                for ticket in tickets:
                    assert ticket.answer is not None and ticket.answer.result is not None
        finally:
            await engine.venue.aclose()

    trio.run(main)
    assert peaks == {1: 1, 3: 3}
