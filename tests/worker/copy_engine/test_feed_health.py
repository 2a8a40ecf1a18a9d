"""Feed health: with the sandbox's RTDS muted (pings answered, no trades), the engine marks
the feed stale, switches detection to fast polling (heartbeat, ``copytrade status``,
config status, metrics) and still copies; once trades flow again, the feed is back. No
operator acts in between, and the config's status shows the gap and the polls per minute."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest
import redis
import trio
from flask import render_template

from blueprints.dashboard.base import present
from models.notifications import Notification, NotificationDelivery
from schemas.configs import ConfigStatusSchema
from services.copying import configs
from services.notifications import channels
from services.platform import copy_control, metrics, operations
from tests.conftest import DEADLINE
from tests.worker.conftest import delete_prefixed_keys
from tests.worker.copy_engine.conftest import STEADY, inject, owned, settled, wait_for

# Stale after 1 s without a trade frame; backstop polls far apart, so a copy made while the
# feed is stale can only come from the fast polling the stale feed switched on.
STALE = dataclasses.replace(STEADY, feed_stale_seconds=1.0, backstop_poll_seconds=30.0)


@pytest.fixture
def engine_prefix(app, redis_url):
    """The deployment's own prefix, so a config's status reads these engines' heartbeats."""
    prefix = copy_control.prefix()
    yield prefix
    delete_prefixed_keys(redis.Redis.from_url(redis_url), prefix + "copy:")


def _mute(control, enabled: bool) -> None:
    control.call("POST", "/rtds/mute", {"enabled": enabled}, expect=200)


def test_a_muted_feed_goes_stale_polling_copies_and_the_feed_comes_back(
        app, run_engines, make_config, trader, market, target, venue_control, redis_url,
        engine_prefix):
    config = make_config(trader.user, target, size_multiplier=Decimal("0.5"))
    client = redis.Redis.from_url(redis_url)
    seen: dict[str, object] = {}
    email = channels.add(trader.user, "email").channel  # any channel: its delivery is queued

    async def detection(engine, source: str) -> None:
        with trio.fail_after(DEADLINE):
            while engine.detection.source != source:
                await trio.sleep(0.05)

    async def trades_flow(engine) -> None:
        """A whale trades elsewhere until the feed is live (one may fall in a reconnect)."""
        with trio.fail_after(DEADLINE):
            while engine.detection.source != "feed":
                await inject(venue_control, "0x" + "77" * 20, market.no, "BUY", "10", "0.5")
                with trio.move_on_after(0.7):
                    await detection(engine, "feed")

    async def scenario(engines):
        engine = engines[0]
        seen["engine"] = engine.name
        await owned(engine, target)
        await trades_flow(engine)  # the feed carries trades: it is the live source
        assert engine.polls.delay() == STALE.backstop_poll_seconds
        await trio.to_thread.run_sync(_mute, venue_control, True)
        await detection(engine, "poll")
        assert engine.polls.delay() == STALE.poll_seconds  # fast polling while stale
        since = engine.detection.since
        seen["metrics"] = metrics.exposition()[0].decode()
        await trio.sleep(STALE.heartbeat_seconds * 2)
        seen["executors"] = await trio.to_thread.run_sync(
            lambda: operations.executors(client, engine_prefix, since))
        seen["gap"] = await trio.to_thread.run_sync(configs.status, trader.user, config.id)
        # The target trades while the feed is silent: polling finds and copies it.
        await inject(venue_control, target, market.yes, "BUY", "40", "0.5")
        [intent] = await wait_for(settled(config))
        assert intent.status == "filled", (intent.reason, intent.detail)
        assert engine.stats.poll_fills == 1 and engine.stats.feed_fills == 0
        # Muted, orders_matched (asked for on the same connection) carries nothing either:
        # the connection is dropped as stale, and opened again.
        with trio.fail_after(DEADLINE):
            while engine.detection.stale_reconnects < 1:
                await trio.sleep(0.05)
        await trio.to_thread.run_sync(_mute, venue_control, False)
        await trades_flow(engine)
        assert engine.detection.since > since
        await trio.sleep(STALE.heartbeat_seconds * 2)
        seen["back"] = await trio.to_thread.run_sync(configs.status, trader.user, config.id)

    try:
        run_engines(scenario, settings=STALE)
    finally:
        _mute(venue_control, False)
    [row] = [e for e in seen["executors"] if e["config_id"] == str(config.id)]
    assert row["detection"] == "poll" and row["detection_since"]
    assert row["detection_last_gap_at"] and row["polls_per_minute"] >= 1
    # While the feed is silent: polling since the gap began, the gap still growing.
    gap = present(ConfigStatusSchema(), seen["gap"])
    assert gap["detection"] == "poll" and gap["detection_last_gap_at"]
    assert gap["detection_since"] == gap["detection_last_gap_at"]
    assert gap["detection_last_gap_seconds"] >= STALE.heartbeat_seconds
    assert gap["polls_per_minute"] >= 2  # fast polls of the target
    # Back on the feed: the gap is closed, as long as it lasted (at least the copy by poll).
    back = present(ConfigStatusSchema(), seen["back"])
    assert back["detection"] == "feed" and back["detection_since"] > gap["detection_since"]
    assert back["detection_last_gap_at"] == gap["detection_last_gap_at"]
    assert back["detection_last_gap_seconds"] > gap["detection_last_gap_seconds"]
    with app.test_request_context():
        shown = {name: render_template("dashboard/_config_status.html", config=config,
                                       status=status) for name, status in
                 (("gap", gap), ("back", back))}
    assert 'data-detection="poll"' in shown["gap"] and 'data-gap="open"' in shown["gap"]
    assert "polls/min" in shown["gap"] and "so far" in shown["gap"]
    assert 'data-detection="feed"' in shown["back"] and 'data-gap="closed"' in shown["back"]
    exported = seen["metrics"]
    assert 'copytrade_detection_source{source="poll"} 1.0' in exported
    assert 'copytrade_detection_source{source="feed"} 0.0' in exported
    assert "copytrade_feed_stale_reconnects_total" in exported
    # The follower was told once that detection fell back (the drop is the episode),
    # and that notice was queued for their channel.
    # (A starved machine can see the feed drop twice: each episode is told once.)
    key = f"feed.degraded:{trader.user.id}:{seen['engine']}:{gap['detection_last_gap_at']}"
    [told] = Notification.select().where(Notification.user == trader.user,
                                         Notification.type == "feed.degraded",
                                         Notification.key == key)
    # It says what replaced the feed and how late that is (no chain RPC here: polls).
    assert told.text.endswith("The live feed stopped carrying trades: Data API polls replace "
                              "it (about 22 s late: the Data API lags the chain).")
    assert NotificationDelivery.select().where(
        NotificationDelivery.notification == told,
        NotificationDelivery.channel == email).count() == 1
