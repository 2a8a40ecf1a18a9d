"""Feed health: with the sandbox's RTDS muted (pings answered, no trades), the engine marks
the feed stale, switches detection to fast polling (heartbeat, ``copytrade status``,
config status, metrics) and still copies; once trades flow again, the feed is back."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import redis
import trio

from services.platform import metrics, operations
from tests.worker.copy_engine.conftest import FAST, inject, owned, settled, wait_for

# Stale after 1 s without a trade frame; backstop polls far apart, so a copy made while the
# feed is stale can only come from the fast polling the stale feed switched on.
STALE = dataclasses.replace(FAST, feed_stale_seconds=1.0, backstop_poll_seconds=30.0)


def _mute(control, enabled: bool) -> None:
    control.call("POST", "/rtds/mute", {"enabled": enabled}, expect=200)


def test_a_muted_feed_goes_stale_polling_copies_and_the_feed_comes_back(
        run_engines, make_config, trader, market, target, venue_control, redis_url,
        engine_prefix):
    config = make_config(trader.user, target, size_multiplier=Decimal("0.5"))
    client = redis.Redis.from_url(redis_url)
    seen: dict[str, object] = {}

    async def detection(engine, source: str) -> None:
        with trio.fail_after(15):
            while engine.detection.source != source:
                await trio.sleep(0.05)

    async def trades_flow(engine) -> None:
        """A whale trades elsewhere until the feed is live (one may fall in a reconnect)."""
        with trio.fail_after(15):
            while engine.detection.source != "feed":
                await inject(venue_control, "0x" + "77" * 20, market.no, "BUY", "10", "0.5")
                with trio.move_on_after(0.7):
                    await detection(engine, "feed")

    async def scenario(engines):
        engine = engines[0]
        await owned(engine, target)
        await trades_flow(engine)  # the feed carries trades: it is the live source
        assert engine.poll_delay() == STALE.backstop_poll_seconds
        await trio.to_thread.run_sync(_mute, venue_control, True)
        await detection(engine, "poll")
        assert engine.poll_delay() == STALE.poll_seconds  # fast polling while stale
        since = engine.detection.since
        seen["metrics"] = metrics.exposition()[0].decode()
        await trio.sleep(STALE.heartbeat_seconds * 2)
        seen["executors"] = await trio.to_thread.run_sync(
            lambda: operations.executors(client, engine_prefix, since))
        # The target trades while the feed is silent: polling finds and copies it.
        await inject(venue_control, target, market.yes, "BUY", "40", "0.5")
        [intent] = await wait_for(settled(config))
        assert intent.status == "filled", (intent.reason, intent.detail)
        assert engine.stats.poll_fills == 1 and engine.stats.feed_fills == 0
        assert engine.detection.stale_reconnects >= 1
        await trio.to_thread.run_sync(_mute, venue_control, False)
        await trades_flow(engine)
        assert engine.detection.since > since

    try:
        run_engines(scenario, settings=STALE)
    finally:
        _mute(venue_control, False)
    [row] = [e for e in seen["executors"] if e["config_id"] == str(config.id)]
    assert row["detection"] == "poll" and row["detection_since"]
    exported = seen["metrics"]
    assert 'copytrade_detection_source{source="poll"} 1.0' in exported
    assert 'copytrade_detection_source{source="feed"} 0.0' in exported
    assert "copytrade_feed_stale_reconnects_total" in exported
