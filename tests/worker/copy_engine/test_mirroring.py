"""The copy engine against the sandbox venue: detection, mirroring rules, paper, stop, dedup."""

from __future__ import annotations

import dataclasses
import gc
from decimal import Decimal

import redis
import trio
import trio.testing

from models.base import db
from models.copying import CopyConfig, CopyPosition
from models.trading import Order, PaperTrade
from services.copying import intents as copy_intents
from services.copying.intents import CopyIntentDraft
from tests.conftest import DEADLINE
from tests.worker.copy_engine.conftest import (
    FAST,
    edit_config,
    inject,
    intents_of,
    owned,
    settled,
    wait_for,
)
from worker.copy_engine.engine import CopyEngine, EngineSettings


def _orders_from(venue_control, address: str) -> list[dict]:
    return [e for e in venue_control.received_orders()
            if e["body"]["order"]["maker"].lower() == address.lower()]


def test_buy_is_mirrored_with_token_side_and_size(run_engines, make_config, trader, market,
                                                  target, venue_control):
    config = make_config(trader.user, target, size_multiplier=Decimal("0.5"))

    async def scenario(engines):
        await owned(engines[0], target)
        # The target buys the NO token (outcome index 1): we must buy NO, not YES.
        await inject(venue_control, target, market.no, "BUY", "40", "0.5")
        [intent] = await wait_for(settled(config))
        assert intent.status == "filled", (intent.reason, intent.detail)

    run_engines(scenario)
    [intent] = intents_of(config)
    assert (intent.token_id, intent.side, intent.size) == (market.no, "BUY", Decimal(20))
    assert intent.outcome_index == 1 and intent.filled_size == Decimal(20)
    assert intent.latency_ms is not None and intent.detection_delay_ms is not None
    [sent] = _orders_from(venue_control, trader.address)
    assert sent["body"]["order"]["tokenId"] == market.no
    assert sent["body"]["order"]["side"] == "BUY" and sent["body"]["orderType"] == "FAK"
    assert venue_control.balances(trader.address)["positions"] == {market.no: "20"}
    with db.connection_context():
        order = Order.get(Order.order_hash == sent["order_id"])
        assert (order.source, order.config_id, order.target_trade_id) == (
            "copy", config.id, str(intent.id))
        position = CopyPosition.get(CopyPosition.config == config.id)
        assert position.shares == Decimal(20)


def test_one_fill_fans_out_with_caps_min_size_blocked_category_and_price_guard(
        run_engines, make_config, make_trader, market, target, venue_control):
    capped = make_config(make_trader().user, target, max_position_usdc=Decimal(3))
    tiny = make_config(make_trader().user, target, size_multiplier=Decimal("0.1"))
    blocked = make_config(make_trader().user, target, blocked_categories=["politics"])
    guarded = make_config(make_trader().user, target, price_deviation_bps=100)
    plain = make_config(make_trader().user, target)

    async def scenario(engines):
        await owned(engines[0], target)
        # The house asks 0.51: 200 bps from the target's 0.50 fill.
        await inject(venue_control, target, market.yes, "BUY", "30", "0.5")
        for config in (capped, tiny, blocked, guarded, plain):
            await wait_for(settled(config))

    run_engines(scenario)
    [cap] = intents_of(capped)
    assert cap.status == "filled" and cap.size == Decimal("5.76")  # 3 pUSD at worst 0.52
    assert cap.filled_size * cap.filled_price <= Decimal(3)
    assert [(i.status, i.reason) for i in intents_of(tiny)] == [("skipped", "below_min_size")]
    assert [(i.status, i.reason) for i in intents_of(blocked)] == [
        ("skipped", "category_blocked")]
    assert [(i.status, i.reason) for i in intents_of(guarded)] == [
        ("skipped", "price_deviation")]
    [full] = intents_of(plain)
    assert full.status == "filled" and full.filled_size == Decimal(30)


def test_sells_are_proportional_to_the_share_the_target_sold(run_engines, make_config,
                                                            trader, market, target,
                                                            venue_control):
    config = make_config(trader.user, target, size_multiplier=Decimal("0.5"))

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "100", "0.5")
        await wait_for(settled(config, 1))
        await inject(venue_control, target, market.yes, "SELL", "25", "0.49")
        await wait_for(settled(config, 2))

    run_engines(scenario)
    buy, sell = intents_of(config)
    assert (buy.side, buy.filled_size) == ("BUY", Decimal(50))
    assert sell.status == "filled", (sell.reason, sell.detail)
    assert (sell.side, sell.size) == ("SELL", Decimal("12.5"))  # 25% of our 50
    assert venue_control.balances(trader.address)["positions"] == {market.yes: "37.5"}


def test_paper_config_fills_on_paper_and_leaves_the_venue_untouched(
        run_engines, make_config, trader, market, target, venue_control):
    config = make_config(trader.user, target, paper_trading=True)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(settled(config))

    run_engines(scenario)
    [intent] = intents_of(config)
    assert intent.paper and intent.status == "filled" and intent.filled_size == Decimal(10)
    assert _orders_from(venue_control, trader.address) == []
    assert venue_control.balances(trader.address)["positions"] == {}
    with db.connection_context():
        [paper] = PaperTrade.select().where(PaperTrade.config_id == config.id)
        assert paper.status == "filled" and paper.filled_size == Decimal(10)


def test_stop_halts_copying(run_engines, make_config, trader, market, target, venue_control):
    config = make_config(trader.user, target)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(settled(config))

        def stop() -> None:
            with db.connection_context():
                CopyConfig.update(is_active=False, version=CopyConfig.version + 1).where(
                    CopyConfig.id == config.id).execute()

        await trio.to_thread.run_sync(stop)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await trio.sleep(2)  # several polls and sweeps

    run_engines(scenario)
    assert len(intents_of(config)) == 1
    assert len(_orders_from(venue_control, trader.address)) == 1


def test_feed_and_polling_see_a_fill_once(run_engines, make_config, trader, market, target,
                                          venue_control):
    config = make_config(trader.user, target, paper_trading=True)

    async def scenario(engines):
        engine = engines[0]
        await owned(engine, target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(settled(config))
        rt = engine.targets[target]
        assert await rt.poll_once() == 0  # already seen (feed or poll): not again
        rt.seen.clear()  # a restarted engine forgets; the database still refuses a second
        await rt.poll_once()
        await trio.sleep(1)

    run_engines(scenario)
    assert len(intents_of(config)) == 1


def test_intent_insert_is_exactly_once(bound_db, make_config, trader, target):
    config = make_config(trader.user, target)
    import uuid

    from models.base import utcnow

    def row() -> CopyIntentDraft:
        now = utcnow()
        return CopyIntentDraft(id=uuid.uuid4(), config_id=config.id, user_id=trader.user.id,
                               kind="mirror", target_trade_key="0xabc|1|BUY|" + target,
                               target_address=target, token_id="1", status="pending",
                               seen_at=now, created_at=now)

    assert len(copy_intents.insert([row()])) == 1
    assert copy_intents.insert([row()]) == []
    CopyConfig.update(is_active=False).where(CopyConfig.id == config.id).execute()
    fresh = row()
    fresh.target_trade_key = "other"
    assert copy_intents.insert([fresh]) == []  # a stopped config takes no new decision


def test_edits_apply_to_the_running_executor(run_engines, make_config, trader, market, target,
                                             venue_control):
    config = make_config(trader.user, target, paper_trading=True)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(settled(config, 1))

        await trio.to_thread.run_sync(lambda: edit_config(config, size_multiplier=Decimal(2)))
        await trio.sleep(1)  # a few sweeps
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(settled(config, 2))

    run_engines(scenario)
    assert [i.size for i in intents_of(config)] == [Decimal(10), Decimal(20)]


def test_take_profit_sells_the_position_once(run_engines, make_config, trader, market, target,
                                             venue_control, venue_server):
    config = make_config(trader.user, target, take_profit_bps=1000)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "20", "0.5")
        await wait_for(settled(config, 1))
        # The market rallies: the house re-quotes around 0.70 (bid 0.69 > cost 0.51 + 10%).
        def rally() -> None:
            state = venue_server.state
            with state.lock:
                state.recenter_house(state.catalog.markets[market.condition_id], Decimal("0.7"))

        await trio.to_thread.run_sync(rally)
        await wait_for(settled(config, 2))
        await trio.sleep(1.5)  # more exit checks: no second sale

    run_engines(scenario)
    _buy, exit_sale = intents_of(config)
    assert exit_sale.kind == "take_profit" and exit_sale.side == "SELL"
    assert exit_sale.status == "filled" and exit_sale.filled_size == Decimal(20)
    assert len(intents_of(config)) == 2


def test_rest_preview_create_start_then_the_engine_mirrors(client, auth_headers, user,
                                                          run_engines, market, target,
                                                          venue_control):
    from tests.trading_support import onboarded_trader

    copier = onboarded_trader(user, "500", venue_control)  # a new user's deposit wallet
    fields = {"target_address": target, "size_multiplier": "1.5", "max_position_usdc": "200",
              "price_deviation_bps": 500, "paper_trading": False}
    shown = client.post("/api/configs/preview", json=fields, headers=auth_headers).get_json()
    created = client.post("/api/configs", json={"preview_id": shown["preview_id"]},
                          headers=auth_headers)
    assert created.status_code == 201
    config_id = created.get_json()["id"]
    assert client.post(f"/api/configs/{config_id}/start",
                       headers=auth_headers).status_code == 200
    config = CopyConfig.get_by_id(config_id)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.no, "BUY", "8", "0.5")
        await wait_for(settled(config))

    run_engines(scenario)
    trades = client.get(f"/api/configs/{config_id}/trades", headers=auth_headers).get_json()
    assert [(t["side"], t["token_id"], t["size"], t["status"], t["decision"])
            for t in trades] == [("buy", market.no, "12", "filled", "copied")]
    assert trades[0]["latency_ms"] is not None
    status = client.get(f"/api/configs/{config_id}/status", headers=auth_headers).get_json()
    assert status["fills_last_hour"] == 1 and status["last_detection_at"]
    pnl = client.get(f"/api/configs/{config_id}/pnl", headers=auth_headers).get_json()
    assert pnl["positions"][0]["size"] == "12"
    assert venue_control.balances(copier.maker)["positions"] == {market.no: "12"}


def test_backstop_polls_hold_off_while_a_fill_is_being_copied(
        run_engines, make_config, trader, market, target, venue_control):
    """With the feed up, polling only backfills: it waits for copies in flight (whose
    latency its requests would add to) and resumes after them; so does garbage collection."""
    config = make_config(trader.user, target)

    async def scenario(engines):
        engine = engines[0]
        await owned(engine, target)
        with trio.fail_after(DEADLINE):
            while not engine.feed_connected:
                await trio.sleep(0.05)
        # The venue holds the copy's POST /order for 2.5 s: the fill stays in flight.
        await trio.to_thread.run_sync(lambda: venue_control.call(
            "POST", "/faults", {"path": "/clob/order", "method": "POST", "status": 0,
                                "delay": "2.5", "count": 1}, expect=201))
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        with trio.fail_after(10):
            while engine.executor.copying == 0:
                await trio.sleep(0.01)
        await trio.sleep(0.3)  # a poll already past the gate when the fill came finishes
        before = engine.stats.poll_requests
        await trio.sleep(1.5)  # longer than the backstop interval (1 s)
        assert engine.executor.copying == 1
        assert engine.stats.poll_requests == before
        assert not gc.isenabled()  # collection waits for the copy too...
        await wait_for(settled(config))
        # The settle commit lands a moment before the copy ends (positions, answers): wait for
        # the copy itself, then collection must be back on.
        with trio.fail_after(DEADLINE):
            while engine.executor.copying:
                await trio.sleep(0.01)
        assert gc.isenabled()  # ...and only for it
        after = engine.stats.poll_requests
        await trio.sleep(1.5)
        assert engine.stats.poll_requests > after

    run_engines(scenario)


def test_polling_is_capped_per_second_across_the_deployments_targets(redis_url, engine_prefix):
    settings = EngineSettings(backstop_poll_seconds=5.0, backstop_polls_per_second=20.0,
                              poll_seconds=1.0, polls_per_second=80.0)
    engine = CopyEngine("capped", redis.Redis.from_url(redis_url), engine_prefix, settings)
    engine.targets = {f"0x{i:040x}": engine.watcher_for(f"0x{i:040x}") for i in range(1000)}
    engine.detection.source = "poll"  # polls are the source: the feed down, no chain
    assert engine.polls.delay() == 12.5  # no feed: 1,000 targets at 80 polls/s in all
    engine.detection.source = "feed"
    assert engine.polls.delay() == 50.0  # 1,000 targets at 20 polls/s in all
    engine.detection.source = "chain"  # the feed degraded, the chain's logs detect
    assert engine.polls.delay() == 50.0  # polls only backfill: the backstop pace
    engine.ownership.engines = 4  # four engines with ~1,000 targets each share the rate
    assert engine.polls.delay() == 200.0
    engine.detection.source = "poll"
    assert engine.polls.delay() == 50.0
    engine.ownership.engines = 1
    engine.targets = dict(list(engine.targets.items())[:10])
    assert engine.polls.delay() == 1.0  # few targets: every target polled every second
    engine.detection.source = "matched"
    assert engine.polls.delay() == 5.0


def test_first_polls_of_targets_starting_together_take_turns(redis_url, engine_prefix):
    settings = EngineSettings(polls_per_second=20.0)
    engine = CopyEngine("paced", redis.Redis.from_url(redis_url), engine_prefix, settings)
    engine.ownership.engines = 2  # this engine's share: 10 first polls a second
    turns: list[float] = []

    async def one() -> None:
        await engine.polls.first_poll()
        turns.append(trio.current_time())

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for _ in range(5):
                nursery.start_soon(one)
        await trio.sleep(2)
        await one()  # later: at once

    clock = trio.testing.MockClock(autojump_threshold=0)
    trio.run(main, clock=clock)
    assert [round(t - turns[0], 3) for t in turns[:5]] == [0.0, 0.1, 0.2, 0.3, 0.4]
    assert round(turns[5] - turns[0], 3) == 2.4  # 0.4 + 2: no turn to wait for


def test_the_engines_count_the_live_engines_at_each_sweep(run_engines):
    async def scenario(engines):
        with trio.fail_after(DEADLINE):
            while any(engine.ownership.engines != 3 for engine in engines):
                await trio.sleep(0.05)

    run_engines(scenario, count=3)


def test_balance_reads_are_paced_oldest_first_under_the_deployments_rate(
        run_engines, make_config, make_trader, target, venue_control):
    """Every copier's estimate is read once when opened; then the stale ones are re-read
    at most at the engine's share of the balance-read rate (re-opening reads none)."""
    copiers = [make_trader() for _ in range(6)]
    for copier in copiers:
        make_config(copier.user, target)
    settings = dataclasses.replace(FAST, wallet_refresh_seconds=0.3, balance_reads_per_second=2.0,
                                   account_reopen_seconds=0.5)
    counted: dict[str, int] = {}

    async def scenario(engines):
        engine = engines[0]
        await owned(engine, target)
        with trio.fail_after(DEADLINE):  # the first reads, one per copier
            while any(s.refreshed_at == 0 for _, s in engine.wallets.accounts._slots.items()):
                await trio.sleep(0.05)
        await trio.to_thread.run_sync(lambda: venue_control.call("DELETE", "/requests"))
        await trio.sleep(3)
        tally = await trio.to_thread.run_sync(lambda: venue_control.call("GET", "/requests"))
        counted["reads"] = sum(tally.get("GET /clob/balance-allowance", {}).values())
        ages = sorted(s.refreshed_at for s in engine.wallets.accounts._slots.values())
        counted["spread"] = ages[-1] - ages[0]

    run_engines(scenario, settings=settings)
    # 2 reads a second for 3 s, one per 0.5 s turn (unpaced: 6 copiers per turn, ~36). The
    # rate is a ceiling: on a loaded machine the turns come late and fewer reads fit in the
    # 3 s (3 seen beside a full suite), so the floor only asks that stale ones were re-read.
    assert 2 <= counted["reads"] <= 8
    assert counted["spread"] > 0.5  # taken in turn, not all at once


def test_later_fills_in_a_token_are_priced_from_the_market_channel(
        run_engines, make_config, trader, market, target, venue_control):
    """The first fill in a token reads GET /book and follows the token on the market
    channel; the next one decides and prices from the channel's book, which matches the
    venue's after our own copy took liquidity."""
    config = make_config(trader.user, target)

    async def scenario(engines):
        engine = engines[0]
        await owned(engine, target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(settled(config))
        assert engine.stats.book_requests >= 1
        followed = await engine.quotes.books.wait_synced(market.yes, 5)
        venue_book = await engine.venue.clob.book(market.yes)
        assert (followed.bids, followed.asks) == (venue_book.bids, venue_book.asks)
        assert followed.min_order_size == venue_book.min_order_size  # seeded from REST
        reads, hits = engine.stats.book_requests, engine.stats.book_hits
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(settled(config, 2))
        assert engine.stats.book_requests == reads
        assert engine.stats.book_hits > hits

    run_engines(scenario)
    intents = intents_of(config)
    assert [(i.status, i.filled_size) for i in intents] == [
        ("filled", Decimal(10)), ("filled", Decimal(10))]
