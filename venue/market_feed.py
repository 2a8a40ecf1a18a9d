"""CLOB market channel: order books kept locally from the venue's pushed snapshots and changes.

Usage (Trio worker, or asyncio)::

    async with client.book_feed([token_id]) as books:
        books.seed(await client.clob.book(token_id))  # optional: min size and neg risk
        ...
        book = books.book(token_id) or await client.clob.book(token_id)

``book()`` answers only while the book is known to be in sync: the token is subscribed, its
snapshot arrived on the current connection, and that connection has stayed up (and answered
its keepalives) since. Otherwise it answers None and the caller reads ``GET /book``. After a
reconnect every token is subscribed again and comes back with its new snapshot.
"""

from __future__ import annotations

import json
import logging
from bisect import bisect_left, insort
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from decimal import Decimal
from typing import Any

import anyio

from venue.models import BUY, LastTradePrice, Level, OrderBook, PriceChange, TickSizeChange
from venue.parse.feeds import MarketEvent, parse_market_frame
from venue.parse.values import MalformedResponse
from venue.ws import LINK_ERRORS, ReconnectingFeed

log = logging.getLogger(__name__)

class _LocalBook:
    """One token's book as the channel told it: levels by price, rebuilt on read when changed.

    Each side also keeps its prices sorted (ascending), updated by bisection when a level
    comes or goes, so the first read after a change (a fill's, on the critical path) only
    copies levels out instead of sorting them.
    """

    __slots__ = ("ask_prices", "asks", "asset_id", "bid_prices", "bids", "built", "hash",
                 "last_trade_price", "market", "min_order_size", "neg_risk", "tick_size",
                 "timestamp_ms")

    def __init__(self, snapshot: OrderBook) -> None:
        self.market = snapshot.market
        self.asset_id = snapshot.asset_id
        self.timestamp_ms = snapshot.timestamp_ms
        self.hash = snapshot.hash
        self.bids = {level.price: level for level in snapshot.bids}
        self.asks = {level.price: level for level in snapshot.asks}
        self.bid_prices = sorted(self.bids)
        self.ask_prices = sorted(self.asks)
        self.tick_size = snapshot.tick_size
        self.min_order_size = snapshot.min_order_size  # the WS book omits these two
        self.neg_risk = snapshot.neg_risk
        self.last_trade_price = snapshot.last_trade_price
        self.built: OrderBook | None = None

    def apply(self, change: PriceChange) -> None:
        """Set one level to its new total size ("0" removes it)."""
        if change.side == BUY:
            levels, prices = self.bids, self.bid_prices
        else:
            levels, prices = self.asks, self.ask_prices
        price = change.price
        if change.size:
            if price not in levels:
                insort(prices, price)
            levels[price] = Level(price=price, size=change.size)
        elif levels.pop(price, None) is not None:
            del prices[bisect_left(prices, price)]
        self.timestamp_ms = change.timestamp_ms
        self.hash = change.hash
        self.built = None

    def build(self, seeded: OrderBook | None) -> OrderBook:
        """The book as an OrderBook (worst first, best last), market params from the seed."""
        if self.built is None:
            self.built = OrderBook(
                market=self.market,
                asset_id=self.asset_id,
                timestamp_ms=self.timestamp_ms,
                hash=self.hash,
                bids=tuple(map(self.bids.__getitem__, self.bid_prices)),
                asks=tuple(map(self.asks.__getitem__, reversed(self.ask_prices))),
                min_order_size=_first(self.min_order_size, seeded, "min_order_size"),
                tick_size=_first(self.tick_size, seeded, "tick_size"),
                neg_risk=_first(self.neg_risk, seeded, "neg_risk"),
                last_trade_price=self.last_trade_price,
            )
        return self.built


def _first(value: Any, seeded: OrderBook | None, name: str) -> Any:
    return value if value is not None or seeded is None else getattr(seeded, name)


class BookFeed(ReconnectingFeed):
    """Local order books of watched tokens; run it inside ``open_book_feed``.

    Not thread-safe: call it from the event loop that runs it.
    """

    name = "market channel"
    link_errors = (*LINK_ERRORS, MalformedResponse)

    def __init__(
        self,
        url: str,
        token_ids: Iterable[str] = (),
        *,
        ping_interval: float = 10.0,
        open_timeout: float = 10.0,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
    ) -> None:
        super().__init__(url, ping_interval=ping_interval, open_timeout=open_timeout,
                         backoff_initial=backoff_initial, backoff_max=backoff_max)
        self.messages = 0
        self._wanted: set[str] = set()
        self._seeds: dict[str, OrderBook] = {}
        self._books: dict[str, _LocalBook] = {}  # only books in sync on this connection
        # Per connection: what the venue was asked for, and what still has to be sent.
        self._on_wire: set[str] = set()
        self._to_subscribe: set[str] = set()
        self._to_unsubscribe: set[str] = set()
        self._initial_sent = False
        self._wake: anyio.CancelScope | None = None
        self._changed = anyio.Event()
        # Called with the tokens whose book moved, after each frame (a listener's own work
        # must be quick: it runs on the feed's loop).
        self.moved: Callable[[set[str]], None] | None = None
        self.watch(token_ids)

    # ------------------------------------------------------------- interface

    @property
    def tokens(self) -> frozenset[str]:
        """The token ids watched."""
        return frozenset(self._wanted)

    def watch(self, token_ids: Iterable[str]) -> None:
        """Subscribe more tokens (sent at once on the open connection)."""
        for token in token_ids:
            token = str(token)
            if token not in self._wanted:
                self._wanted.add(token)
                self._to_subscribe.add(token)
        self._wake_sender()

    def unwatch(self, token_ids: Iterable[str]) -> None:
        """Stop following tokens; their books become unknown at once."""
        for token in token_ids:
            token = str(token)
            if token in self._wanted:
                self._wanted.discard(token)
                self._books.pop(token, None)
                self._to_subscribe.discard(token)
                if token in self._on_wire:
                    self._to_unsubscribe.add(token)
        self._wake_sender()

    def seed(self, book: OrderBook) -> None:
        """Give a token's market params (min order size, neg risk) from a REST book."""
        self._seeds[book.asset_id] = book
        local = self._books.get(book.asset_id)
        if local is not None:
            local.built = None

    def book(self, token_id: str) -> OrderBook | None:
        """The token's current book, or None while it is not known to be in sync."""
        local = self._books.get(token_id)
        if local is None or not self.connected:
            return None
        return local.build(self._seeds.get(token_id))

    def best_bid(self, token_id: str) -> Decimal | None:
        """The token's best bid without building its book (None: no bid, or not in sync)."""
        local = self._books.get(token_id)
        if local is None or not self.connected or not local.bid_prices:
            return None
        return local.bid_prices[-1]

    def synced(self, token_id: str) -> bool:
        """Whether the token's book is in sync on the open connection (its moves are told)."""
        return self.connected and token_id in self._books

    async def wait_synced(self, token_id: str, timeout: float) -> OrderBook | None:
        """The token's book once in sync, or None after ``timeout`` seconds."""
        with anyio.move_on_after(timeout):
            while True:
                book = self.book(token_id)
                if book is not None:
                    return book
                await self._changed.wait()
        return None

    # ------------------------------------------------------------ connection

    async def run(self) -> None:
        """Connect, subscribe and apply messages forever, reconnecting with jittered backoff."""
        try:
            await self._run_links()
        finally:
            self._link_down()

    def _heard(self) -> int:
        return self.messages

    async def _session(self, websocket: Any) -> None:
        """Subscribe everything watched, then apply frames until the connection ends."""
        self._on_wire = set()
        self._to_unsubscribe = set()
        self._to_subscribe = set(self._wanted)
        self._initial_sent = False
        self._link_up()
        answered = True  # anything heard since the last PING
        next_ping = anyio.current_time() + self.ping_interval
        while True:
            while self._to_subscribe or self._to_unsubscribe:  # watch() may run meanwhile
                await self._send_subscriptions(websocket)
            frame = None
            # recv() is cancellation-safe: a timeout means "ping", a cancel means "watch()".
            with anyio.move_on_after(max(0.0, next_ping - anyio.current_time())) as scope:
                self._wake = scope
                frame = await websocket.recv()
            self._wake = None
            if frame is not None:
                answered = True
                self.messages += 1
                self._apply(parse_market_frame(frame))
            elif anyio.current_time() >= next_ping:
                if not answered:  # a silent link may be dead: its books cannot be trusted
                    raise TimeoutError("no answer to PING")
                await websocket.send("PING")  # the venue drops sockets that stop pinging
                answered = False
                next_ping = anyio.current_time() + self.ping_interval

    async def _send_subscriptions(self, websocket: Any) -> None:
        # Unsubscribe first: an unwatch then watch of one token must end subscribed.
        if self._to_unsubscribe:
            dropped, self._to_unsubscribe = sorted(self._to_unsubscribe), set()
            self._on_wire.difference_update(dropped)
            await websocket.send(json.dumps({"assets_ids": dropped, "operation": "unsubscribe"}))
        if self._to_subscribe:
            added, self._to_subscribe = sorted(self._to_subscribe), set()
            self._on_wire.update(added)
            if self._initial_sent:
                message: dict[str, Any] = {"assets_ids": added, "operation": "subscribe"}
            else:
                message = {"assets_ids": added, "type": "market"}
                self._initial_sent = True
            await websocket.send(json.dumps(message))

    def _wake_sender(self) -> None:
        if self._wake is not None and (self._to_subscribe or self._to_unsubscribe):
            self._wake.cancel()

    def _apply(self, events: list[MarketEvent]) -> None:
        snapshots = False
        moved: set[str] = set()
        for event in events:
            if isinstance(event, PriceChange):
                local = self._books.get(event.asset_id)
                if local is not None:
                    local.apply(event)
                    moved.add(event.asset_id)
            elif isinstance(event, OrderBook):
                if event.asset_id in self._wanted:
                    self._books[event.asset_id] = _LocalBook(event)
                    snapshots = True
                    moved.add(event.asset_id)
            else:
                local = self._books.get(event.asset_id)
                if local is None:
                    continue
                if isinstance(event, LastTradePrice):
                    local.last_trade_price = event.price
                elif isinstance(event, TickSizeChange):
                    local.tick_size = event.new_tick_size
                local.built = None
        if snapshots:
            self._notify()
        if moved and self.moved is not None:
            self.moved(moved)

    def _link_down(self) -> None:
        """The connection is gone: nothing it told can be trusted any more."""
        self._books.clear()
        super()._link_down()
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()


@asynccontextmanager
async def open_book_feed(
    url: str, token_ids: Iterable[str] = (), **options: Any
) -> AsyncIterator[BookFeed]:
    """Run a ``BookFeed`` in the background for the duration of the block."""
    feed = BookFeed(url, token_ids, **options)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(feed.run)
        try:
            yield feed
        finally:
            tasks.cancel_scope.cancel()
