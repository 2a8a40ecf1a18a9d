"""RTDS live activity feed: ``activity/trades`` frames as parsed trades, reconnecting with backoff.

When ``trades`` carries nothing for ``stale_after`` seconds, or its subscription is refused,
the feed subscribes to ``activity/orders_matched`` on the same connection (users report
``trades`` disabled and point to it: ACCOUNTS.md §12), and relies on whichever type carries
trades (``carrier``); only when both are silent (or refused) is the connection stale.

Usage (Trio worker, or asyncio)::

    async with open_activity_feed(config.rtds_url, wallets={"0xabc..."}) as feed:
        async for trade in feed:        # ActivityItem, proxy wallet in ``wallets``
            ...

The feed is global, so wallets are filtered here (case-insensitively: RTDS sends
checksummed addresses). Frames missed while disconnected are not replayed: consumers
backfill by polling the Data API and de-duplicate on ``ActivityItem.dedup_key``. The feed
keeps every wallet's trades of the last ``history_seconds`` (``recent``), watched or not:
a wallet watched from now on (a target taken over from a dead worker) is caught up from
them without a request.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from venue.models import ActivityItem
from venue.parse.feeds import RTDS_ORDERS_MATCHED, RTDS_TRADES, parse_rtds_activity
from venue.ws import ReconnectingFeed

log = logging.getLogger(__name__)



def activity_request(action: str, kind: str) -> dict[str, Any]:
    """The message (un)subscribing to one activity type."""
    return {"action": action, "subscriptions": [{"topic": "activity", "type": kind}]}


SUBSCRIBE_ACTIVITY_TRADES: dict[str, Any] = activity_request("subscribe", RTDS_TRADES)


class FeedStale(Exception):
    """The connection answers pings but has carried no trade for ``stale_after`` seconds."""


class ActivityFeed(ReconnectingFeed):
    """Live trades of watched wallets; iterate it inside ``open_activity_feed``.

    With ``stale_after`` set, a connection that carries no trade frame for that long (a
    known failure of RTDS: pings answered, trades gone) is dropped and opened again;
    ``stale_since`` (epoch seconds) says since when, until a trade frame arrives.
    """

    name = "rtds feed"
    link_errors = (*ReconnectingFeed.link_errors, FeedStale)

    def __init__(
        self,
        url: str,
        wallets: Iterable[str] | None = None,
        *,
        ping_interval: float = 5.0,
        open_timeout: float = 10.0,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        buffer: int = 1000,
        stale_after: float | None = None,
        history_seconds: float = 120.0,
        history_size: int = 20000,
    ) -> None:
        super().__init__(url, ping_interval=ping_interval, open_timeout=open_timeout,
                         backoff_initial=backoff_initial, backoff_max=backoff_max)
        self.wallets: set[str] | None = (
            None if wallets is None else {w.lower() for w in wallets}
        )
        self.frames = 0
        self.stale_after = stale_after
        self.stale_since: float | None = None
        self.stale_count = 0  # connections dropped for carrying no trades
        # The activity type that carried the latest trade (trades or orders_matched; None
        # until one did), the types asked for on this connection and those it refused.
        self.carrier: str | None = None
        self.subscribed: set[str] = set()
        self.refused: set[str] = set()
        self._send: MemoryObjectSendStream[ActivityItem]
        self._receive: MemoryObjectReceiveStream[ActivityItem]
        self._send, self._receive = anyio.create_memory_object_stream[ActivityItem](buffer)
        # Recent trades of every wallet (arrival order; at most history_size in all).
        self.history_seconds = history_seconds
        self.history_size = history_size
        self._recent: dict[str, deque[ActivityItem]] = {}
        self._arrivals: deque[tuple[float, str]] = deque()
        self.up_since: float | None = None  # epoch seconds the current link came up at
        self._cut_at = 0.0  # arrival of the latest trade the history lost to its size

    def watch(self, wallet: str) -> None:
        """Start passing through ``wallet``'s trades."""
        if self.wallets is None:
            self.wallets = set()
        self.wallets.add(wallet.lower())

    def unwatch(self, wallet: str) -> None:
        """Stop passing through ``wallet``'s trades."""
        if self.wallets is not None:
            self.wallets.discard(wallet.lower())

    def recent(self, wallet: str) -> list[ActivityItem]:
        """``wallet``'s trades this feed carried in the last ``history_seconds``, oldest
        first (all it carried since a moment only when it ``covers`` that moment)."""
        return list(self._recent.get(wallet.lower(), ()))

    def traded(self, wallet: str) -> bool:
        """True when ``wallet`` traded in the last ``history_seconds`` (as far as this feed
        carried it)."""
        return wallet.lower() in self._recent

    def _remember(self, trade: ActivityItem, now: float) -> None:
        wallet = trade.wallet
        self._recent.setdefault(wallet, deque()).append(trade)
        self._arrivals.append((now, wallet))
        horizon = now - self.history_seconds
        while self._arrivals and (self._arrivals[0][0] < horizon
                                  or len(self._arrivals) > self.history_size):
            at, old = self._arrivals.popleft()
            if at >= horizon:  # pushed out by a burst: the history reaches less far back
                self._cut_at = at
            kept = self._recent[old]
            kept.popleft()
            if not kept:
                del self._recent[old]

    def wanted(self, trade: ActivityItem) -> bool:
        """True when the trade's wallet is watched (every wallet when ``wallets`` is None)."""
        return self.wallets is None or trade.wallet in self.wallets

    async def receive(self) -> ActivityItem:
        """The next watched trade."""
        return await self._receive.receive()

    def close(self) -> None:
        """Release the hand-off buffer; iteration then ends."""
        self._send.close()
        self._receive.close()

    def __aiter__(self) -> AsyncIterator[ActivityItem]:
        return self._receive.__aiter__()

    async def run(self) -> None:
        """Connect, subscribe and pump trades forever, reconnecting with jittered backoff."""
        try:
            await self._run_links()
        finally:
            self._send.close()

    def _heard(self) -> int:
        return self.frames

    def _link_up(self) -> None:
        super()._link_up()
        self.up_since = time.time()

    def _link_down(self) -> None:
        super()._link_down()
        self.up_since = None

    def covers(self, since: float) -> bool:
        """True when ``recent`` holds every trade the feed carried since ``since`` (epoch
        seconds): connected all along, and not longer ago than the history reaches."""
        return (self.up_since is not None and self.stale_since is None
                and since >= max(self.up_since, self._cut_at,
                                 time.time() - self.history_seconds))

    async def _session(self, websocket: Any) -> None:
        """Subscribe and forward frames until the connection ends (ConnectionClosed)."""
        self.subscribed, self.refused = set(), set()
        await self._ask(websocket, "subscribe", RTDS_TRADES)
        if self.carrier == RTDS_ORDERS_MATCHED:  # trades was gone: ask for both again
            await self._ask(websocket, "subscribe", RTDS_ORDERS_MATCHED)
        self._link_up()
        now = anyio.current_time()
        next_ping = now + self.ping_interval
        stale_at = now + self.stale_after if self.stale_after else float("inf")
        while True:
            frame = None
            # recv() is cancellation-safe, so a timeout here only means "time to ping".
            with anyio.move_on_after(max(0.0, min(next_ping, stale_at) - anyio.current_time())):
                frame = await websocket.recv()
            if frame is None:
                if anyio.current_time() >= stale_at:
                    if self.stale_since is None:
                        self.stale_since = time.time()
                    if not await self._fall_back(websocket):
                        self._went_stale()
                    stale_at = anyio.current_time() + (self.stale_after or 0.0)
                await websocket.send("PING")  # RTDS drops idle sockets without text pings
                next_ping = anyio.current_time() + self.ping_interval
                continue
            self.frames += 1
            parsed = parse_rtds_activity(frame)
            for kind in parsed.refused:
                self.refused.add(kind)
                self.subscribed.discard(kind)
                log.warning("rtds feed: activity/%s refused", kind)
                if self.carrier in (None, kind) and self.stale_since is None:
                    self.stale_since = time.time()  # what carried the trades is gone
                await self._fall_back(websocket)
            if parsed.trades and self.stale_after:
                stale_at = anyio.current_time() + self.stale_after
                self.stale_since = None
            arrived = time.time()
            for kind, trade in parsed.trades:
                if kind in self.subscribed:  # not one still in flight after an unsubscribe
                    self._carried(kind)
                self._remember(trade, arrived)
                if self.wanted(trade):
                    await self._send.send(trade)
            if RTDS_ORDERS_MATCHED in self.subscribed and any(
                    kind == RTDS_TRADES for kind, _ in parsed.trades):
                # trades is back: one type is enough (each fill would come twice)
                await self._ask(websocket, "unsubscribe", RTDS_ORDERS_MATCHED)

    async def _ask(self, websocket: Any, action: str, kind: str) -> None:
        await websocket.send(json.dumps(activity_request(action, kind)))
        (self.subscribed.add if action == "subscribe" else self.subscribed.discard)(kind)

    async def _fall_back(self, websocket: Any) -> bool:
        """``trades`` is silent or refused: ask for ``orders_matched`` on this connection.
        False when it was asked for (or refused) already."""
        if RTDS_ORDERS_MATCHED in self.subscribed | self.refused:
            return False
        log.warning("rtds feed: no trades on activity/trades; trying activity/%s",
                    RTDS_ORDERS_MATCHED)
        await self._ask(websocket, "subscribe", RTDS_ORDERS_MATCHED)
        return True

    def _carried(self, kind: str) -> None:
        if kind != self.carrier:
            log.info("rtds feed: trades now carried by activity/%s", kind)
            self.carrier = kind

    def _went_stale(self) -> None:
        if self.stale_since is None:
            self.stale_since = time.time()
        self.stale_count += 1
        raise FeedStale(f"no trade frame for {self.stale_after:g} s")


@asynccontextmanager
async def open_activity_feed(
    url: str, wallets: Iterable[str] | None = None, **options: Any
) -> AsyncIterator[ActivityFeed]:
    """Run an ``ActivityFeed`` in the background for the duration of the block."""
    feed = ActivityFeed(url, wallets, **options)
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(feed.run)
            try:
                yield feed
            finally:
                tasks.cancel_scope.cancel()
    finally:
        feed.close()
