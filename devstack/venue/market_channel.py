"""The CLOB market channel hub: who watches which token's book, and what they are told.

Messages are the venue's (samples ws-market-*.json): a ``book`` per token on subscribe, then
``price_change`` (the new total size of each changed level, "0" removes it) whenever a
watched book changes, and ``last_trade_price`` after matches. The order desk tells the
channel of each change through the ``BookListener`` methods (``on_book_changed``,
``on_trade``); the channel reads books and tokens through a narrow ``BookSource``. Every
method runs under the state's lock, right after the state change it reports, so a
subscriber's outbox receives changes in the order the book changed and after they were
applied. A market nobody watches
costs one dict lookup per change: levels are only aggregated for watched tokens.
"""

from __future__ import annotations

import hashlib
import json
import queue
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Protocol

from devstack.venue.catalog import Catalog, Market
from devstack.venue.matching import BookOrder, MarketBook

ONE = Decimal(1)
D_SCALE = Decimal(10**6)
MAX_SWEEP_WAIT = 1.0  # seconds: the state's clock may be swapped (tests), so look again soon

Levels = dict[Decimal, int]  # price -> shares (base units)

# Every value sent is a string, so the C encoder serves (jsonenc is for Decimal numbers).
dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def plain(value: Decimal) -> str:
    """A Decimal as the venue writes prices and sizes ("0.5", "250")."""
    return format(value.normalize(), "f")


def book_summary(
    market: Market,
    token_id: str,
    bids: Iterable[tuple[str, str]],
    asks: Iterable[tuple[str, str]],
    last_trade: str,
    timestamp_ms: int,
) -> dict:
    """GET /book's body from (price, size) texts worst first, hashed as the venue hashes it."""
    bids, asks = list(bids), list(asks)
    return {
        "market": market.condition_id,
        "asset_id": token_id,
        "timestamp": str(timestamp_ms),
        "hash": book_hash(market, token_id, [_level_json(*lv) for lv in bids],
                          [_level_json(*lv) for lv in asks], last_trade, timestamp_ms),
        "bids": [{"price": p, "size": s} for p, s in bids],
        "asks": [{"price": p, "size": s} for p, s in asks],
        "min_order_size": plain(market.min_order_size),
        "tick_size": str(market.tick_size),
        "neg_risk": market.neg_risk,
        "last_trade_price": last_trade,
    }


def book_hash(
    market: Market, token_id: str, bids: list[str], asks: list[str], last_trade: str,
    timestamp_ms: int,
) -> str:
    """SHA-1 of the book's compact JSON with an empty hash (samples README), from levels
    already rendered as JSON (`_level_json`), worst first.

    Written out rather than json.dumps'd: every value is our own digits and hex, which JSON
    does not escape, and a watched book is hashed once per change of each of its levels.
    """
    text = "".join((
        '{"market":"', market.condition_id, '","asset_id":"', token_id,
        '","timestamp":"', str(timestamp_ms), '","hash":"","bids":[', ",".join(bids),
        '],"asks":[', ",".join(asks), '],"min_order_size":"', plain(market.min_order_size),
        '","tick_size":"', str(market.tick_size), '","neg_risk":',
        "true" if market.neg_risk else "false", ',"last_trade_price":"', last_trade, '"}',
    ))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _level_json(price: str, size: str) -> str:
    return '{"price":"' + price + '","size":"' + size + '"}'


@dataclass(eq=False)
class MarketSubscriber:
    """One market-channel connection and the token ids it watches."""

    connection_id: str
    outbox: queue.Queue = field(default_factory=queue.Queue)
    assets: set[str] = field(default_factory=set)


class _Side:
    """One side of a token's book as told: per price its size and its rendered texts."""

    __slots__ = ("descending", "levels", "order")

    def __init__(self, sizes: Levels, descending: bool) -> None:
        self.descending = descending  # asks are listed from the highest price
        # price -> (shares in base units, price text, size text, level JSON)
        self.levels: dict[Decimal, tuple[int, str, str, str]] = {}
        self.order: list[Decimal] | None = None  # worst first; None once a level comes or goes
        for price, size in sizes.items():
            self.set(price, size)

    def size(self, price: Decimal) -> int:
        """Shares told at a price (0 when no level)."""
        level = self.levels.get(price)
        return level[0] if level else 0

    def set(self, price: Decimal, size: int) -> None:
        """A level's new size; 0 removes it."""
        old = self.levels.get(price)
        if not size:
            del self.levels[price]
            self.order = None
            return
        if old is None:
            self.order = None
        price_text = plain(price) if old is None else old[1]
        size_text = _size_text(size)
        self.levels[price] = (size, price_text, size_text, _level_json(price_text, size_text))

    def worst_first(self) -> list[tuple[int, str, str, str]]:
        """The levels in the venue's order (best last)."""
        if self.order is None:
            self.order = sorted(self.levels, reverse=self.descending)
        return [self.levels[price] for price in self.order]

    def best(self, empty: str) -> str:
        """The best price's text, or `empty` on an empty side."""
        if self.order is None:
            self.order = sorted(self.levels, reverse=self.descending)
        return self.levels[self.order[-1]][1] if self.order else empty


class _TokenView:
    """The levels one token's watchers were last told, in the token's own prices."""

    __slots__ = ("asks", "bids", "index", "token_id", "watchers")

    def __init__(self, token_id: str, index: int, bids: Levels, asks: Levels) -> None:
        self.token_id = token_id
        self.index = index
        self.bids = _Side(bids, descending=False)
        self.asks = _Side(asks, descending=True)
        self.watchers: set[MarketSubscriber] = set()

    def diff(self, bids: Levels, asks: Levels) -> list[tuple[str, Decimal, int]]:
        """(side, price, new size) of every level that differs from what was told."""
        changes = []
        for side, told, now in (("BUY", self.bids, bids), ("SELL", self.asks, asks)):
            for price in sorted(told.levels.keys() | now.keys()):
                size = now.get(price, 0)
                if told.size(price) != size:
                    changes.append((side, price, size))
        return changes


@dataclass
class _Trade:
    """A match to report as last_trade_price once the operation's book changes are out."""

    taker_index: int
    side: str
    price: Decimal  # outcome-0 terms
    size: int
    fee_rate_bps: int
    transaction_hash: str
    timestamp_ms: int


@dataclass
class _Tracked:
    """A market with at least one watched token."""

    market: Market
    last_trade: Decimal | None  # outcome-0 terms, as last told
    views: dict[int, _TokenView] = field(default_factory=dict)
    expires_at: float | None = None  # earliest expiration of a resting GTD order
    trades: list[_Trade] = field(default_factory=list)


class Books(Protocol):
    """The order desk as the channel reads it."""

    books: Mapping[str, MarketBook]  # by condition id


class BookSource(Protocol):
    """What the channel reads: the state's lock and clock, its catalog's tokens and
    markets, its desk's books (read through the state: a reset replaces both)."""

    lock: threading.RLock
    clock: Callable[[], float]
    catalog: Catalog
    desk: Books


class MarketChannel:
    """Subscribers of the market channel and the books they watch (thread-safe).

    A ``BookListener`` of the order desk: it is told of book changes and trades.
    """

    def __init__(self, state: BookSource) -> None:
        self._state = state
        self._subscribers: set[MarketSubscriber] = set()
        self._markets: dict[str, _Tracked] = {}  # by condition id
        self._views: dict[str, tuple[str, int]] = {}  # token id -> (condition id, index)
        self._wakeup = threading.Event()
        self._sweeper: threading.Thread | None = None

    # ------------------------------------------------------------ connections

    def connect(self) -> MarketSubscriber:
        """Register a new connection (and make sure GTD expiries get swept)."""
        sub = MarketSubscriber(connection_id=secrets.token_urlsafe(14))
        with self._state.lock:
            self._subscribers.add(sub)
            if self._sweeper is None or not self._sweeper.is_alive():
                self._sweeper = threading.Thread(
                    target=self._sweep, name="sandbox-book-expiry", daemon=True
                )
                self._sweeper.start()
        return sub

    def disconnect(self, sub: MarketSubscriber) -> None:
        """Forget a connection and everything it watched."""
        with self._state.lock:
            self.unsubscribe(sub, list(sub.assets))
            self._subscribers.discard(sub)
        self._wakeup.set()  # the sweeper ends once nobody is connected

    def close_all(self) -> None:
        """Tell every sender loop to stop (server shutdown)."""
        with self._state.lock:
            subs = list(self._subscribers)
        for sub in subs:
            sub.outbox.put(None)

    def watched(self, condition_id: str) -> bool:
        """True when some token of the market is watched."""
        return condition_id in self._markets

    # ---------------------------------------------------------- subscriptions

    def subscribe(
        self, sub: MarketSubscriber, token_ids: Iterable[str], *, initial_dump: bool = True
    ) -> None:
        """Watch tokens; queue their current books (one JSON array) unless told not to."""
        state = self._state
        with state.lock:
            now = state.clock()
            ts = int(now * 1000)
            books = []
            for token in dict.fromkeys(str(t) for t in token_ids):
                found = state.catalog.tokens.get(token)
                if found is None:
                    continue  # the venue ignores unknown assets
                market, index = found
                tracked = self._markets.get(market.condition_id)
                if tracked is None:
                    tracked = _Tracked(market, market.last_trade_price)
                    self._markets[market.condition_id] = tracked
                else:
                    self.on_book_changed(market)  # expiries not yet told: out before the snapshot
                view = tracked.views.get(index)
                if view is None:
                    bids, asks = self._aggregate(tracked, now)
                    view = _TokenView(token, index, *_token_levels(index, bids, asks))
                    tracked.views[index] = view
                    self._views[token] = (market.condition_id, index)
                view.watchers.add(sub)
                sub.assets.add(token)
                books.append(self._book_message(tracked, view, ts))
            if books and initial_dump:
                sub.outbox.put(dumps(books))

    def unsubscribe(self, sub: MarketSubscriber, token_ids: Iterable[str]) -> None:
        """Stop watching tokens; a token nobody watches is no longer tracked."""
        with self._state.lock:
            for token in token_ids:
                sub.assets.discard(token)
                where = self._views.get(token)
                if where is None:
                    continue
                tracked = self._markets[where[0]]
                view = tracked.views[where[1]]
                view.watchers.discard(sub)
                if view.watchers:
                    continue
                del tracked.views[where[1]]
                del self._views[token]
                if not tracked.views:
                    del self._markets[where[0]]

    # --------------------------------------------------------------- changes

    def on_trade(
        self, market: Market, taker_index: int, side: str, size: int, fee_rate_bps: int,
        transaction_hash: str, now: float,
    ) -> None:
        """Remember a match of a watched market; `on_book_changed` reports it after the book."""
        tracked = self._markets.get(market.condition_id)
        if tracked is None or market.last_trade_price is None:
            return
        tracked.trades.append(_Trade(
            taker_index, side, market.last_trade_price, size, fee_rate_bps, transaction_hash,
            int(now * 1000),
        ))

    def on_book_changed(self, market: Market) -> None:
        """Tell the watchers of a market how its book changed (and the trades noted)."""
        tracked = self._markets.get(market.condition_id)
        if tracked is None:
            return
        state = self._state
        with state.lock:
            tracked.market = market
            now = state.clock()
            ts = int(now * 1000)
            bids, asks = self._aggregate(tracked, now)
            entries: dict[int, list[dict]] = {}
            for index, view in tracked.views.items():
                changed = self._apply(tracked, view, *_token_levels(index, bids, asks), ts)
                if changed:
                    entries[index] = changed
            if entries:
                self._send_changes(tracked, entries, ts)
            for trade in tracked.trades:
                self._send_trade(tracked, trade)
            tracked.trades.clear()
            tracked.last_trade = market.last_trade_price

    def resync(self) -> None:
        """After a reset: send fresh books of watched tokens that still exist, drop the rest."""
        state = self._state
        with state.lock:
            now = state.clock()
            ts = int(now * 1000)
            for condition_id, tracked in list(self._markets.items()):
                market = state.catalog.markets.get(condition_id)
                if market is None:
                    for view in tracked.views.values():
                        self._views.pop(view.token_id, None)
                    del self._markets[condition_id]
                    continue
                tracked.market = market
                tracked.last_trade = market.last_trade_price
                tracked.trades.clear()
                bids, asks = self._aggregate(tracked, now)
                for index, view in tracked.views.items():
                    token_bids, token_asks = _token_levels(index, bids, asks)
                    view.bids = _Side(token_bids, descending=False)
                    view.asks = _Side(token_asks, descending=True)
                    text = dumps([self._book_message(tracked, view, ts)])
                    for sub in view.watchers:
                        sub.outbox.put(text)

    # --------------------------------------------------------------- helpers

    def _aggregate(self, tracked: _Tracked, now: float) -> tuple[Levels, Levels]:
        """The market's live levels in outcome-0 terms; notes the next GTD expiry."""
        book = self._state.desk.books[tracked.market.condition_id]
        expiries: list[float] = []
        bids = _levels(book.bids, now, expiries)
        asks = _levels(book.asks, now, expiries)
        earliest = min(expiries, default=None)
        if earliest is not None and (tracked.expires_at is None or earliest < tracked.expires_at):
            self._wakeup.set()
        tracked.expires_at = earliest
        return bids, asks

    def _apply(
        self, tracked: _Tracked, view: _TokenView, bids: Levels, asks: Levels, ts: int
    ) -> list[dict]:
        """Move a view to the new levels one change at a time; the venue's change entries."""
        entries = []
        for side, price, size in view.diff(bids, asks):
            (view.bids if side == "BUY" else view.asks).set(price, size)
            entries.append({
                "asset_id": view.token_id,
                "price": plain(price),
                "size": _size_text(size),
                "side": side,
                "hash": self._hash(tracked, view, ts),
                "best_bid": view.bids.best("0"),
                "best_ask": view.asks.best("1"),
            })
        return entries

    def _send_changes(self, tracked: _Tracked, entries: dict[int, list[dict]], ts: int) -> None:
        """One price_change per subscriber, with the changes of the tokens it watches."""
        texts: dict[tuple[int, ...], str] = {}
        targets: dict[MarketSubscriber, list[int]] = {}
        for index in entries:
            for sub in tracked.views[index].watchers:
                targets.setdefault(sub, []).append(index)
        for sub, indexes in targets.items():
            key = tuple(indexes)
            text = texts.get(key)
            if text is None:
                text = texts[key] = dumps({
                    "market": tracked.market.condition_id,
                    "price_changes": [e for i in indexes for e in entries[i]],
                    "timestamp": str(ts),
                    "event_type": "price_change",
                })
            sub.outbox.put(text)

    def _send_trade(self, tracked: _Tracked, trade: _Trade) -> None:
        """last_trade_price to the watchers of each token, in that token's terms."""
        for index, view in tracked.views.items():
            if index == trade.taker_index:
                side = trade.side
            else:  # buying one outcome is selling the other
                side = "SELL" if trade.side == "BUY" else "BUY"
            text = dumps({
                "market": tracked.market.condition_id,
                "asset_id": view.token_id,
                "price": plain(_own(index, trade.price)),
                "size": _size_text(trade.size),
                "fee_rate_bps": str(trade.fee_rate_bps),
                "side": side,
                "timestamp": str(trade.timestamp_ms),
                "event_type": "last_trade_price",
                "transaction_hash": trade.transaction_hash,
            })
            for sub in view.watchers:
                sub.outbox.put(text)

    def _hash(self, tracked: _Tracked, view: _TokenView, ts: int) -> str:
        return book_hash(
            tracked.market, view.token_id, [lv[3] for lv in view.bids.worst_first()],
            [lv[3] for lv in view.asks.worst_first()], _last_text(tracked, view), ts,
        )

    def _book_message(self, tracked: _Tracked, view: _TokenView, ts: int) -> dict:
        """The WS book: GET /book's fields and hash, without min_order_size and neg_risk."""
        return {
            "market": tracked.market.condition_id,
            "asset_id": view.token_id,
            "timestamp": str(ts),
            "hash": self._hash(tracked, view, ts),
            "bids": [{"price": lv[1], "size": lv[2]} for lv in view.bids.worst_first()],
            "asks": [{"price": lv[1], "size": lv[2]} for lv in view.asks.worst_first()],
            "tick_size": str(tracked.market.tick_size),
            "event_type": "book",
            "last_trade_price": _last_text(tracked, view),
        }

    def _sweep(self) -> None:
        """Publish books whose GTD orders expired, at their expiry; ends with the last client."""
        state = self._state
        while True:
            self._wakeup.clear()
            with state.lock:
                if not self._subscribers:
                    self._sweeper = None
                    return
                now = state.clock()
                for tracked in list(self._markets.values()):
                    if tracked.expires_at is not None and tracked.expires_at <= now:
                        self.on_book_changed(tracked.market)
                deadlines = [t.expires_at for t in self._markets.values() if t.expires_at]
                wait = min(deadlines) - now if deadlines else None
            # No deadline: nothing can expire until an order rests, which wakes us up.
            self._wakeup.wait(None if wait is None else min(max(wait, 0.01), MAX_SWEEP_WAIT))


def _levels(orders: list[BookOrder], now: float, expiries: list[float]) -> Levels:
    """Resting orders summed per book price, as GET /book counts them (live, unexpired)."""
    levels: Levels = {}
    for order in orders:
        remaining = order.remaining
        if remaining <= 0 or order.expired(now):
            continue
        # order.book_price, but a complement already computed: its hash is cached with it
        price = order.price if order.token_index == 0 else _complement(order.price)
        levels[price] = levels.get(price, 0) + remaining
        if order.order_type == "GTD" and order.expiration:
            expiries.append(order.expiration)
    return levels


def _token_levels(index: int, bids: Levels, asks: Levels) -> tuple[Levels, Levels]:
    """A token's (bids, asks) from the market's outcome-0 levels."""
    if index == 0:
        return dict(bids), dict(asks)
    return ({_complement(p): s for p, s in asks.items()},
            {_complement(p): s for p, s in bids.items()})


_COMPLEMENTS: dict[Decimal, Decimal] = {}  # at most one entry per price on the tick grid


def _complement(price: Decimal) -> Decimal:
    """1 - price, the same object each time: a Decimal computes its hash once per object,
    and a fresh one costs more to hash than everything else done with it here."""
    flipped = _COMPLEMENTS.get(price)
    if flipped is None:
        flipped = _COMPLEMENTS[price] = ONE - price
    return flipped


def _own(index: int, price: Decimal) -> Decimal:
    return price if index == 0 else _complement(price)


def _last_text(tracked: _Tracked, view: _TokenView) -> str:
    last = tracked.last_trade
    return "" if last is None else plain(_own(view.index, last))


def _size_text(base: int) -> str:
    return plain(Decimal(base) / D_SCALE)
