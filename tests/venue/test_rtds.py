"""RTDS feed against a real local websocket server: subscribe, filter, ping, reconnect."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from decimal import Decimal
from functools import partial
from typing import Any

import pytest
import trio
from websockets.exceptions import ConnectionClosed

from tests.venue.conftest import sample_text
from venue.rtds import SUBSCRIBE_ACTIVITY_TRADES, ActivityFeed, open_activity_feed

FRAMES: list[dict[str, Any]] = json.loads(sample_text("rtds-activity-trades.json"))
WATCHED = FRAMES[0]["payload"]["proxyWallet"]  # checksummed on the wire
OTHER = FRAMES[1]["payload"]["proxyWallet"]


class ScriptedRtds:
    """Connection 1: a watched trade, an unwatched one, a PONG, then a drop.
    Connection 2: waits for the client's PING, then sends another watched trade."""

    def __init__(self) -> None:
        self.connections = 0
        self.subscriptions: list[Any] = []
        self.pings = 0

    async def handler(self, websocket: Any) -> None:
        self.connections += 1
        self.subscriptions.append(json.loads(await websocket.recv()))
        if self.connections == 1:
            await websocket.send(json.dumps(FRAMES[0]))
            await websocket.send(json.dumps(FRAMES[1]))
            await websocket.send("PONG")
            await websocket.close(code=1011)  # abnormal close: the client must come back
            return
        try:
            while (await websocket.recv()) != "PING":
                pass
            self.pings += 1
            second = json.loads(json.dumps(FRAMES[0]))
            second["payload"]["transactionHash"] = "0x" + "ab" * 32
            second["payload"]["proxyWallet"] = WATCHED.lower()
            await websocket.send(json.dumps(second))
            while True:
                if await websocket.recv() == "PING":
                    self.pings += 1
        except ConnectionClosed:
            pass


def test_feed_under_trio_filters_pings_and_reconnects() -> None:
    from websockets.trio.server import serve

    script = ScriptedRtds()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            server = await nursery.start(partial(serve, script.handler, 0, host="127.0.0.1"))
            port = server.listeners[0].socket.getsockname()[1]
            url = f"ws://127.0.0.1:{port}/rtds"
            async with open_activity_feed(url, [WATCHED], ping_interval=0.2,
                                          backoff_initial=0.05) as feed:
                with trio.fail_after(10):
                    first = await feed.receive()
                    second = await feed.receive()
                assert feed.connections == 2
                await feed.wait_connected()
                # The unwatched wallet's trade was not passed on, but is kept: a wallet
                # watched later (a target taken over) is caught up from it.
                assert [t.proxy_wallet for t in feed.recent(OTHER.upper())] == [OTHER]
                assert feed.up_since is not None
                # Connected since the second link came up: the drop before it is a hole.
                assert feed.covers(feed.up_since) and not feed.covers(feed.up_since - 1)
            assert first.proxy_wallet == WATCHED
            assert first.price == Decimal("0.03") and first.fee == Decimal("1.5309")
            assert second.transaction_hash == "0x" + "ab" * 32
            assert second.wallet == WATCHED.lower()
            await server.aclose()
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert script.connections == 2
    assert script.subscriptions == [SUBSCRIBE_ACTIVITY_TRADES] * 2
    assert script.pings >= 1


def test_feed_keeps_retrying_while_server_is_down() -> None:
    async def main() -> None:
        # Nothing listens on this port: connection refused, backoff, retry, never raise.
        listener = trio.socket.socket()
        await listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        listener.close()
        async with open_activity_feed(f"ws://127.0.0.1:{port}/rtds", backoff_initial=0.01,
                                      backoff_max=0.05) as feed:
            await trio.sleep(0.3)
            assert not feed.connected and feed.connections == 0
            assert feed.last_error is not None

    trio.run(main)


def test_feed_under_asyncio() -> None:
    from websockets.asyncio.server import serve

    async def handler(websocket: Any) -> None:
        await websocket.recv()
        for frame in FRAMES:
            await websocket.send(json.dumps(frame))
        await websocket.wait_closed()

    async def main() -> None:
        async with serve(handler, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            async with open_activity_feed(f"ws://127.0.0.1:{port}") as feed:
                trades = [await asyncio.wait_for(feed.receive(), 5) for _ in FRAMES]
        assert {t.proxy_wallet for t in trades} == {WATCHED, OTHER}  # no filter: all wallets

    asyncio.run(main())


def test_the_history_forgets_by_age_and_size_and_says_how_far_back_it_reaches() -> None:
    from venue.parse.feeds import parse_rtds_frame

    [trade] = parse_rtds_frame(json.dumps(FRAMES[0]))
    feed = ActivityFeed("ws://127.0.0.1:1/rtds", [], history_seconds=60, history_size=3)
    now = time.time()
    for n in range(2):
        feed._remember(dataclasses.replace(trade, timestamp=n), now - 100 + n)
    feed._remember(dataclasses.replace(trade, timestamp=2), now - 30)
    assert [t.timestamp for t in feed.recent(WATCHED)] == [2]  # older than 60 s: gone
    for n in range(3, 7):
        feed._remember(dataclasses.replace(trade, timestamp=n, proxy_wallet=OTHER), now)
    assert feed.recent(WATCHED) == []  # pushed out by a burst of three newer trades
    assert [t.timestamp for t in feed.recent(OTHER)] == [4, 5, 6]
    assert feed.traded(OTHER.upper()) and not feed.traded(WATCHED)  # a take-over's order
    feed.up_since = now - 100
    # The burst cut the history at its arrival: nothing before it can be vouched for.
    assert not feed.covers(now - 1) and feed.covers(now)
    feed.close()


def test_watch_and_unwatch() -> None:
    feed = ActivityFeed("ws://127.0.0.1:1/rtds", [])
    feed.watch(WATCHED)
    assert feed.wallets == {WATCHED.lower()}
    feed.unwatch(WATCHED.upper().replace("0X", "0x"))
    assert feed.wallets == set()
    feed.close()
    with pytest.raises(Exception, match="URI"):
        ActivityFeed("http://not-a-websocket")
