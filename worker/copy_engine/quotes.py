"""``QuoteSource``: what a decision reads about a token, its market (cached) and live book.

Books come from the CLOB market channel once the engine follows a token, else from
``GET /book``, after which the token is followed (the channel's book is used only while
it is known to be in sync). At most ``max_watched_books`` tokens are followed; the least
recently quoted is dropped first. The last bid each quote saw is kept with its time
(``last_bid``): what a stop values a position at while its book has none.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from decimal import Decimal

import trio

from services.copying import mirror as copying
from services.copying.execution import Quote
from services.copying.mirror import MarketView
from services.trading import order_plan
from venue.client import AsyncVenueClient
from venue.errors import VenueError
from venue.market_feed import BookFeed
from venue.models import OrderBook
from worker.copy_engine.settings import EngineSettings, EngineStats

LAST_BIDS_KEPT = 50_000  # tokens whose last bid is remembered (least recently seen out)


class QuoteSource:
    """Markets and live books for the engine's decisions (owns the market-channel task)."""

    def __init__(self, settings: EngineSettings, stats: EngineStats) -> None:
        self.settings = settings
        self.stats = stats
        self.venue: AsyncVenueClient | None = None
        self.books: BookFeed | None = None
        self._watched: OrderedDict[str, None] = OrderedDict()  # least recently quoted first
        self.moved: Callable[[set[str]], None] | None = None  # told of the books that moved
        self._bids: OrderedDict[str, tuple[Decimal, float]] = OrderedDict()  # (bid, unix s)

    def last_bid(self, token_id: str) -> tuple[Decimal, float] | None:
        """The last best bid a quote of the token saw, and when (unix seconds)."""
        return self._bids.get(token_id)

    def live(self, token_id: str) -> bool:
        """Whether the market channel follows the token's book in sync (its moves are told)."""
        books = self.books
        return books is not None and books.synced(token_id)

    def live_bid(self, token_id: str) -> Decimal | None:
        """The token's best bid on the market channel now (None: none, or not followed)."""
        books = self.books
        return books.best_bid(token_id) if books is not None else None

    async def run(self) -> None:
        """Follow books on the market channel until cancelled."""
        assert self.venue is not None
        async with self.venue.book_feed() as books:
            books.moved = self.moved
            self.books = books
            try:
                await trio.sleep_forever()
            finally:
                self.books = None
                self._watched.clear()

    async def book(self, token_id: str) -> OrderBook:
        """The token's live book: from the market channel when it follows the token, else
        read now (and followed from then on, so the next fill in it skips the read)."""
        assert self.venue is not None
        books = self.books
        book = books.book(token_id) if books is not None else None
        if book is not None:
            self.stats.book_hits += 1
            self._watched.move_to_end(token_id)
            return book
        book = await self.venue.clob.book(token_id)
        self.stats.book_requests += 1
        if books is not None and self.books is books:
            books.seed(book)  # the channel's books lack the minimum size and neg-risk flag
            if token_id not in self._watched:
                books.watch([token_id])
            self._watched[token_id] = None
            self._watched.move_to_end(token_id)
            while len(self._watched) > self.settings.max_watched_books:
                stale, _ = self._watched.popitem(last=False)
                books.unwatch([stale])
        return book

    async def quote(self, token_id: str) -> Quote:
        """The token's market (cached) with the live book: what deciding and placing need."""
        assert self.venue is not None
        market = await self.venue.gamma.market_by_token(token_id)
        book = await self.book(token_id)
        names = [n for tag in market.tags for n in (tag.label, tag.slug) if n]
        try:  # the live mts/mos/fd (cached 10 s), as previews and orders read them
            params = await self.venue.clob.market_parameters(market.condition_id)
        except VenueError:
            params = None  # the CLOB cannot say: the book's and Gamma's (parameters.limits)
        info = order_plan.market_info_from(token_id, market, book, params)
        if book.best_bid is not None:
            self._bids[token_id] = (book.best_bid, time.time())
            self._bids.move_to_end(token_id)
            if len(self._bids) > LAST_BIDS_KEPT:
                self._bids.popitem(last=False)
        view = MarketView(
            category=market.tags[0].label if market.tags else "",
            tick_size=info.tick_size, min_order_size=info.min_order_size,
            best_bid=book.best_bid, best_ask=book.best_ask,
            accepting_orders=market.accepting_orders and not market.closed,
            categories=copying.normalise_categories(names), fees=info.fee_schedule,
            question=market.question,
            end_ts=int(market.end_date.timestamp()) if market.end_date else None)
        return Quote(view=view, book=book, info=info, market=market)

    async def market_view(self, token_id: str) -> MarketView:
        """Category and limits (cached) with the live top of the book."""
        return (await self.quote(token_id)).view


__all__ = ["QuoteSource"]
