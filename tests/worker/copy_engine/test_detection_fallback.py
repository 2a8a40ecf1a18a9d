"""Detection without the RTDS activity feed (issue 40; ACCOUNTS.md §12: no successor is
documented for RTDS ``activity``, users report ``activity/trades`` disabled and point to
``activity/orders_matched``; on-chain ``OrderFilled`` events and Data API polls stay).

With ``trades`` silent the engine asks for ``orders_matched`` on the same connection; with
both gone (or refused) it reads the exchanges' logs over the chain RPC by itself, no
operator setting it, and stops once the feed carries trades again."""

from __future__ import annotations

import secrets
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest
import redis
import trio

from blueprints.dashboard.base import present
from models import User
from schemas.configs import ConfigStatusSchema
from services.copying import configs
from services.platform import copy_control, metrics
from tests.chain_venue import chain_venue  # noqa: F401 - the fixture
from tests.conftest import DEADLINE
from tests.worker.conftest import delete_prefixed_keys
from tests.worker.copy_engine.conftest import (
    STEADY,
    copy_on_second_blocks,
    inject,
    intents_of,
    owned,
    settled,
    wait_for,
)
from worker.copy_engine.detection import CHAIN, FEED, MATCHED, POLL, DetectionSource
from worker.copy_engine.engine import CopyEngine

# Stale after 1 s without a trade frame; polls asleep, so only the feed or the chain copies.
# use_chain off: the chain is read only as the feed's fallback (COPY_CHAIN_FALLBACK).
QUIET_POLLS = replace(STEADY, feed_stale_seconds=1.0, poll_seconds=300,
                      backstop_poll_seconds=300, use_chain=False, chain_fallback=True,
                      chain_poll_seconds=0.2, chain_fallback_linger_seconds=0.5)

WHALE = "0x" + "77" * 20  # trades elsewhere, so that a live feed carries something


def _activity(control: Any, kind: str, state: str) -> None:
    control.call("POST", "/rtds/activity", {"type": kind, "state": state}, expect=200)


@pytest.fixture
def engine_prefix(app: Any, redis_url: str) -> Any:
    """The deployment's own prefix, so a config's status reads these engines' heartbeats."""
    prefix = copy_control.prefix()
    yield prefix
    delete_prefixed_keys(redis.Redis.from_url(redis_url), prefix + "copy:")


async def _status(engine: CopyEngine, user: Any, config: Any) -> dict[str, Any]:
    """The config's status as REST and MCP show it, once a heartbeat carried the source."""
    await trio.sleep(engine.settings.heartbeat_seconds * 2)
    status = await trio.to_thread.run_sync(configs.status, user, config.id)
    return present(ConfigStatusSchema(), status)


@pytest.fixture
def copier(bound_db: Any) -> Any:
    """A user whose configs copy on paper (detection is what is under test)."""
    return User.create(email=f"{secrets.token_hex(6)}@example.com", tier="elite")


async def _source(engine: CopyEngine, source: str, control: Any, market: str) -> None:
    """Until the engine detects by ``source``, a whale trades elsewhere now and then (the
    feed needs trades to be seen carrying them)."""
    with trio.fail_after(DEADLINE):
        while engine.detection.source != source:
            await inject(control, WHALE, market, "BUY", "10", "0.5")
            with trio.move_on_after(0.5):
                while engine.detection.source != source:
                    await trio.sleep(0.05)


async def _whale_trades(control: Any, token: str) -> None:
    """A whale trades elsewhere, over and over, until cancelled."""
    while True:
        await inject(control, WHALE, token, "BUY", "10", "0.5")
        await trio.sleep(0.2)


def test_with_trades_off_orders_matched_carries_the_feed(
        run_engines, make_config, copier, market, target, venue_control) -> None:
    config = make_config(copier, target, paper_trading=True)
    seen: dict[str, Any] = {}

    async def scenario(engines: list[CopyEngine]) -> None:
        engine = engines[0]
        await owned(engine, target)
        await _source(engine, MATCHED, venue_control, market.no)
        assert engine.feed.carrier == "orders_matched"
        assert "orders_matched" in engine.feed.subscribed
        async with trio.open_nursery() as nursery:  # the feed goes on carrying trades
            nursery.start_soon(_whale_trades, venue_control, market.no)
            seen["status"] = await _status(engine, copier, config)
            seen["metrics"] = metrics.exposition()[0].decode()
            await inject(venue_control, target, market.yes, "BUY", "40", "0.5")
            [intent] = await wait_for(settled(config))
            # the feed was not degraded: polls stayed at the backstop pace
            assert engine.polls.delay() == QUIET_POLLS.backstop_poll_seconds
            nursery.cancel_scope.cancel()
        assert intent.status == "filled" and intent.detection_source == MATCHED
        assert (engine.stats.matched_fills, engine.stats.feed_fills,
                engine.stats.poll_fills, engine.stats.chain_fills) == (1, 0, 0, 0)

    _activity(venue_control, "trades", "off")
    try:
        run_engines(scenario, settings=replace(QUIET_POLLS, chain_fallback=False))
    finally:
        _activity(venue_control, "trades", "on")
    assert seen["status"]["detection"] == "matched"  # REST, MCP and the dashboard's field
    assert 'copytrade_detection_source{source="matched"} 1.0' in seen["metrics"]
    assert 'copytrade_detection_source{source="feed"} 0.0' in seen["metrics"]


@pytest.mark.parametrize("state", ["off", "refused"])
def test_with_the_activity_topic_gone_the_chain_copies_within_two_blocks(
        state, chain, chain_venue, copier, make_config, run_engines, target) -> None:  # noqa: F811
    """trades and orders_matched both gone for good (or refused): the engine reads the
    exchanges' logs over POLYGON_RPC_URL by itself and copies each fill once, before the
    second block after its settlement's (blocks every second); when trades come back, the
    chain stands by again."""
    dev = chain.contracts
    w3 = dev.web3()
    token = chain_venue.add_market(f"fb-{secrets.token_hex(4)}", liquidity=True,
                                   fair_price="0.5", category="politics")["token_ids"][0]
    config = make_config(copier, target, paper_trading=True)

    async def scenario(engines: list[CopyEngine]) -> None:
        engine = engines[0]
        await owned(engine, target)
        assert engine.chain is not None and not engine.settings.use_chain
        with trio.fail_after(DEADLINE):  # no operator action: the fallback starts itself
            while not (engine.detection.source == CHAIN and target in engine.chain.watching
                       and engine.stats.polls >= 1):
                await trio.sleep(0.05)
        status = await _status(engine, copier, config)
        assert (status["detection"], status["detection_chain"],
                status["detection_chain_mode"]) == ("chain", "live", "logs")
        assert status["chain_calls_per_minute"] >= 2  # eth_blockNumber + eth_getLogs
        # the chain detects: polls back to the backstop pace
        assert engine.polls.delay() == QUIET_POLLS.backstop_poll_seconds
        intent, fill, blocks = await copy_on_second_blocks(w3, chain_venue, config, target,
                                                           token)
        assert blocks <= 2, blocks
        assert intent.status == "filled" and intent.detection_source == "chain"
        assert intent.target_tx_hash == fill["transactionHash"]
        assert (engine.stats.chain_fills, engine.stats.feed_fills, engine.stats.matched_fills,
                engine.stats.poll_fills) == (1, 0, 0, 0)
        # once: a poll now finds the fill too, and it is a duplicate
        assert await engine.targets[target].poll_once() == 0
        # trades back: the feed detects again and the chain's reading stands by
        await trio.to_thread.run_sync(_activity, chain_venue, "trades", "on")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_whale_trades, chain_venue, token)
            with trio.fail_after(DEADLINE):
                while not (engine.detection.source == FEED
                           and engine.detection.chain_state() == "standby"):
                    await trio.sleep(0.05)
            nursery.cancel_scope.cancel()
        assert not engine.chain.active

    for kind in ("trades", "orders_matched"):
        _activity(chain_venue, kind, state)
    try:
        # 2 s: whale trades settled on the chain one by one keep a live feed from going stale
        run_engines(scenario, settings=replace(QUIET_POLLS, feed_stale_seconds=2.0))
    finally:
        for kind in ("trades", "orders_matched"):
            _activity(chain_venue, kind, "on")
    [intent] = intents_of(config)
    assert (intent.target_size, intent.target_price) == (Decimal(10), Decimal("0.5"))


def test_the_feed_degraded_notice_names_what_replaced_it() -> None:
    """The reason a follower reads says what replaced the feed and how late that is: the
    chain's logs where a chain RPC is there (standing by), else polls."""
    feed = SimpleNamespace(connected=True, stale_since=None, stale_count=0, carrier="trades")
    standby = SimpleNamespace(connected=False, active=False, mode="logs", pending=False)
    for chain, replaced in ((standby, "the chain's OrderFilled logs replace it (a block or "
                                      "two late: a few seconds)"),
                            (None, "Data API polls replace it (about 22 s late: the Data API "
                                   "lags the chain)")):
        detection = DetectionSource("e")
        detection.chain = chain
        assert detection.observe(feed) and detection.source == FEED
        stale = replace_ns(feed, stale_since=datetime.now(UTC).timestamp())
        assert not detection.observe(stale) and detection.source == POLL
        assert detection.reason == f"The live feed stopped carrying trades: {replaced}"
        assert detection.gap_at is not None


def replace_ns(namespace: SimpleNamespace, **fields: Any) -> SimpleNamespace:
    """A copy of ``namespace`` with ``fields`` changed."""
    return SimpleNamespace(**{**vars(namespace), **fields})
