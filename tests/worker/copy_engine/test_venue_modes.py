"""The copy engine across a venue restart and restricted modes: copies wait and retry while
their fill is young enough, then skip with the mode's reason; nothing is placed twice."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from models.base import db
from models.trading import Order, Trade
from tests.worker.copy_engine.conftest import FAST, inject, intents_of, owned, settled, wait_for


@pytest.fixture
def open_venue(venue_control):
    """The shared venue back to open after the test."""
    yield venue_control
    venue_control.call("POST", "/mode", {"mode": "open"}, expect=200)


def _accepted(venue_control, maker: str) -> list[dict]:
    return [e for e in venue_control.received_orders()
            if maker.lower() in str(e).lower() and (e.get("response") or {}).get("success")]


def test_a_copy_during_a_restart_waits_for_the_venue_and_fills_once(
        run_engines, make_config, trader, market, target, open_venue):
    config = make_config(trader.user, target)

    async def scenario(engines):
        await owned(engines[0], target)
        # 425 for 1.5 s, then post-only (a FAK copy is refused there too) for 1.5 s.
        open_venue.call("POST", "/restart", {"seconds": "1.5", "post_only_seconds": "1.5",
                                             "retry_after": 1}, expect=201)
        await inject(open_venue, target, market.yes, "BUY", "10", "0.5")
        waiting = await wait_for(lambda: [i for i in intents_of(config)
                                          if i.reason == "venue_restarting"])
        assert waiting[0].status == "pending"
        await wait_for(settled(config))

    run_engines(scenario)
    [intent] = intents_of(config)
    assert intent.status == "filled" and intent.filled_size == Decimal(10)
    [accepted] = _accepted(open_venue, trader.address)
    assert accepted["order_id"] == intent.order_id
    with db.connection_context():
        # The refused attempts are kept, detached: one order and one trade count.
        linked = Order.select().where(Order.target_trade_id == str(intent.id))
        assert [o.order_hash for o in linked] == [intent.order_id]
        refused = Order.select().where(Order.user == trader.user.id, Order.status == "rejected")
        assert refused.count() >= 2
        assert all("venue_" in o.error for o in refused)
        assert Trade.select().where(Trade.user == trader.user.id).count() == 1
    assert open_venue.balances(trader.address)["positions"] == {market.yes: "10"}


def test_a_copy_skips_with_the_mode_reason_once_its_fill_is_too_old(
        run_engines, make_config, trader, market, target, open_venue):
    config = make_config(trader.user, target)

    async def scenario(engines):
        await owned(engines[0], target)
        open_venue.call("POST", "/mode", {"mode": "disabled", "retry_after": 1}, expect=200)
        await inject(open_venue, target, market.yes, "BUY", "10", "0.5")
        await wait_for(settled(config))

    run_engines(scenario, settings=replace(FAST, max_fill_age_seconds=3))
    [intent] = intents_of(config)
    assert (intent.status, intent.reason) == ("skipped", "venue_disabled")
    assert "did not reopen" in intent.detail
    assert _accepted(open_venue, trader.address) == []
    assert open_venue.balances(trader.address)["positions"] == {}


def test_balance_reads_and_detection_polls_hold_separate_slots(redis_url, engine_prefix):
    """A thousand copiers' balance refreshes in flight leave every detection-poll slot free."""
    import redis
    import trio

    from worker.copy_engine.engine import CopyEngine

    engine = CopyEngine("engine-slots", redis.Redis.from_url(redis_url), engine_prefix,
                        replace(FAST, balance_concurrency=3, poll_concurrency=5))

    async def main() -> None:
        balances, polls = engine.wallets._limiter, engine.polls.limiter
        for _ in range(balances.total_tokens):
            balances.acquire_on_behalf_of_nowait(object())
        assert balances.available_tokens == 0
        assert (polls.total_tokens, polls.available_tokens) == (5, 5)
        with trio.move_on_after(0.1) as waited:
            await balances.acquire()  # a fourth balance read waits for its own kind only
        assert waited.cancelled_caught

    trio.run(main)


def test_a_retried_copy_that_fails_counts_toward_the_breaker(
        run_engines, make_config, trader, market, target, open_venue):
    """A copy retried once the venue reopens goes the way of every copy: its failure is
    one of the config's failures in a row (here the one that opens the breaker)."""
    config = make_config(trader.user, target, max_consecutive_failures=1)

    async def scenario(engines):
        await owned(engines[0], target)
        open_venue.call("POST", "/mode", {"mode": "disabled", "retry_after": 1}, expect=200)
        await inject(open_venue, target, market.yes, "BUY", "10", "0.5")
        await wait_for(lambda: [i for i in intents_of(config) if i.reason == "venue_disabled"])
        # The retry's order is refused outright (a 400): the copy failed.
        open_venue.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                            "status": 400, "count": 1}, expect=201)
        try:
            await wait_for(settled(config))
            await wait_for(lambda: _stored(config).breaker_state == "open")
        finally:
            open_venue.call("DELETE", "/faults", expect=200)

    run_engines(scenario)
    [intent] = intents_of(config)
    assert intent.status == "failed"
    stored = _stored(config)
    assert (stored.breaker_state, stored.breaker_failures) == ("open", 1)
    assert stored.breaker_retry_at is not None
    assert _accepted(open_venue, trader.address) == []


def test_a_retried_copy_is_not_sent_while_its_config_breaker_is_open(
        run_engines, make_config, make_trader, market, target, open_venue):
    """A copy waiting for the venue to reopen passes the breaker again when retried: once
    another copy of its config tripped the breaker meanwhile, the retry is skipped with
    ``breaker_open`` and nothing is sent."""
    poor = make_trader(funds="8")  # pays 10 shares at ~0.51, not 20
    config = make_config(poor.user, target, max_consecutive_failures=1)

    async def scenario(engines):
        await owned(engines[0], target)
        open_venue.call("POST", "/mode", {"mode": "disabled"}, expect=200)
        await inject(open_venue, target, market.yes, "BUY", "10", "0.5")
        await wait_for(lambda: [i for i in intents_of(config) if i.reason == "venue_disabled"])
        # A second copy the wallet cannot pay fails before it is sent: the breaker opens.
        await inject(open_venue, target, market.yes, "BUY", "20", "0.5")
        await wait_for(lambda: _stored(config).breaker_state == "open")
        open_venue.call("POST", "/mode", {"mode": "open"}, expect=200)
        await wait_for(settled(config, 2))

    run_engines(scenario)
    waited, short = intents_of(config)
    assert (short.status, short.reason) == ("skipped", "insufficient_balance")
    assert (waited.status, waited.reason) == ("skipped", "breaker_open"), waited.detail
    assert _accepted(open_venue, poor.address) == []
    assert _stored(config).breaker_state == "open"
    assert open_venue.balances(poor.address)["positions"] == {}


def _stored(config):
    from models.copying import CopyConfig

    with db.connection_context():
        return CopyConfig.get_by_id(config.id)
