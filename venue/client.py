"""The venue facade: ``VenueClient`` (blocking, Flask/RQ threads) and ``AsyncVenueClient``
(the Trio worker), each bundling Gamma, CLOB, Data API and relayer over one pooled
connection set.

One implementation over two runners (``venue.http``): the endpoint classes hand their calls
to the client's transport, and the multi-step helpers are written once as generators of
steps (``venue.relayer.Steps``), which each client drives with its own ``run_steps``. So on
``VenueClient`` every method returns its value and on ``AsyncVenueClient`` an awaitable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, ClassVar, TypeVar

import httpx

from venue.cache import MetadataCache
from venue.clob import INITIAL_CURSOR, MAX_CANCEL_IDS, ClobApi
from venue.config import VenueConfig
from venue.data_api import DataApi
from venue.errors import VenueError, VenueNotFound, VenueRejected
from venue.gamma import (
    EVENTS_PAGE,
    IDS_PER_REQUEST,
    MARKETS_PAGE,
    GammaApi,
    Pairs,
    Returns,
    event_filters,
    market_filters,
)
from venue.http import AsyncTransport, Call, SyncTransport
from venue.market_feed import BookFeed, open_book_feed
from venue.models import (
    ActivityItem,
    ApiCreds,
    CancelResult,
    Event,
    FeeSchedule,
    KeysetPage,
    Market,
    OpenOrder,
    Position,
)
from venue.rate_tiers import cancel_all_cost
from venue.relayer import RelayerApi, Steps, arun_steps, run_steps
from venue.rtds import ActivityFeed, open_activity_feed

T = TypeVar("T")
MAX_ORDER_PAGES = 50  # guards against a venue that never sends the end cursor
V1_OFFSET_CAP = 10_000  # Data API v1 ``offset`` stops here (ACCOUNTS.md §11)
HISTORY_PAGE = 500
POSITIONS_PAGE = 500  # the Data API's largest positions page
MAX_LIST_PAGES = 1000  # guards a list walk against a venue that never ends it
# A Gamma keyset list refused (the route missing: 404, 405, 410) is remembered this long in
# the client's cache, so each walk meanwhile goes straight to the offset list.
KEYSET_REFUSED_TTL = 600.0
KEYSET_REFUSED_STATUSES = (405, 410)
KEYSET_REFUSED_KEY = "gamma:keyset-refused:"


def gamma_fees(market: Market) -> FeeSchedule | None:
    """Gamma's ``feeSchedule`` of ``market`` (None when its fees are off)."""
    return market.fee_schedule if market.fees_enabled else None


def _described(call: Call[T]) -> Call[T]:
    """A runner that runs nothing: the endpoint classes over it return their ``Call``."""
    return call


# --- multi-step helpers, written once --------------------------------------------------------


def create_or_derive_steps(clob: ClobApi, private_key: str, nonce: int) -> Steps[ApiCreds]:
    """Mint CLOB credentials, or derive the existing ones when the key already has some."""
    try:
        return (yield clob.create_api_key(private_key, nonce))
    except VenueRejected:
        return (yield clob.derive_api_key(private_key, nonce))


def open_orders_steps(clob: ClobApi, creds: ApiCreds, market: str | None,
                      asset_id: str | None) -> Steps[list[OpenOrder]]:
    """Every open order of ``creds``, following ``next_cursor`` to the end."""
    orders: list[OpenOrder] = []
    cursor = INITIAL_CURSOR
    for _ in range(MAX_ORDER_PAGES):
        page = yield clob.open_orders(creds, market=market, asset_id=asset_id,
                                      next_cursor=cursor)
        orders.extend(page.orders)
        if page.is_last or page.next_cursor == cursor:
            break
        cursor = page.next_cursor
    return orders


def cancel_many_steps(clob: ClobApi, creds: ApiCreds, order_ids: Sequence[str],
                      size: int = MAX_CANCEL_IDS) -> Steps[CancelResult]:
    """Cancel any number of orders, ``size`` (at most ``MAX_CANCEL_IDS``) a request; the
    answers merged."""
    size = max(1, min(size, MAX_CANCEL_IDS))
    canceled: list[str] = []
    not_canceled: dict[str, str] = {}
    for start in range(0, len(order_ids), size):
        part = yield clob.cancel_orders(creds, order_ids[start:start + size])
        canceled.extend(part.canceled)
        not_canceled.update(part.not_canceled)
    return CancelResult(canceled=tuple(canceled), not_canceled=not_canceled)


def cancel_all_steps(clob: ClobApi, creds: ApiCreds,
                     bucket: Callable[[], tuple[float, int] | None]) -> Steps[CancelResult]:
    """Cancel every open order of ``creds`` without driving the signer's cancel bucket below
    zero (ACCOUNTS.md §12: a cancel-all costs 1 plus one token per order it cancels, charged
    after, so one big cancel-all can leave the bucket negative): one ``DELETE /cancel-all``
    when its cost fits the tokens ``bucket()`` reports (None: no budgets kept), else the
    open orders by id, a burst's worth a request (the budget waits for the refill)."""
    if bucket() is None:
        return (yield clob.cancel_all(creds))
    orders = yield from open_orders_steps(clob, creds, None, None)  # asks the tier when due
    tokens, burst = bucket() or (0.0, 1)
    if cancel_all_cost(len(orders)) <= tokens:
        return (yield clob.cancel_all(creds))
    return (yield from cancel_many_steps(clob, creds, [o.id for o in orders], burst))


def _upto(rows: list[T], max_rows: int | None) -> list[T]:
    return rows if max_rows is None else rows[:max_rows]


def cursor_or_offset_steps(cursor_page: Callable[[str | None], Call[Any]],
                           offset_page: Callable[[int], Call[list[T]]], page_size: int,
                           max_rows: int | None, v1_cap: int = V1_OFFSET_CAP) -> Steps[list[T]]:
    """Every row of a Data API v2 cursor list (``max_rows`` first ones when set); its v1
    ``offset`` pages only when the v2 route is refused (ACCOUNTS.md §11: v1 stops at
    offset 10,000)."""
    rows: list[T] = []
    cursor: str | None = None
    try:
        while True:
            page = yield cursor_page(cursor)
            rows.extend(page.items)
            if not page.has_more or not page.next_cursor or page.next_cursor == cursor or (
                    max_rows is not None and len(rows) >= max_rows):
                return _upto(rows, max_rows)
            cursor = page.next_cursor
    except (VenueNotFound, VenueRejected):
        if cursor is not None:
            raise  # v2 answered before: a real failure, not a missing route
    rows = []
    offset = 0
    while offset <= v1_cap:  # v1 fallback: past its cap it repeats the last page
        batch = yield offset_page(offset)
        rows.extend(batch)
        if len(batch) < page_size or (max_rows is not None and len(rows) >= max_rows):
            break
        offset += len(batch)
    return _upto(rows, max_rows)


def activity_steps(data: DataApi, user: str, types: Sequence[str] | str | None,
                   start: int | None,
                   max_rows: int | None) -> Steps[list[ActivityItem]]:
    """A wallet's activity since ``start`` (all of it, or ``max_rows`` newest-first rows):
    Data API v2 cursor pages, v1 ``offset`` pages only when v2 is refused."""
    return cursor_or_offset_steps(
        lambda cursor: data.activity_page(user, cursor=cursor, limit=HISTORY_PAGE,
                                          start=start, types=types),
        lambda offset: data.activity(user, types=types, start=start, limit=HISTORY_PAGE,
                                     offset=offset),
        HISTORY_PAGE, max_rows)


def positions_steps(data: DataApi, user: str, status: str | None) -> Steps[list[Position]]:
    """Every position of ``user`` (sizes above 0 and dust alike), each with its status:
    Data API v2 cursor pages, v1 ``offset`` pages only when v2 is refused."""
    return cursor_or_offset_steps(
        lambda cursor: data.positions_page(user, cursor=cursor, limit=POSITIONS_PAGE,
                                           size_threshold="0", status=status),
        lambda offset: data.positions(user, size_threshold="0", limit=POSITIONS_PAGE,
                                      offset=offset),
        POSITIONS_PAGE, None)


def _keyset_refused(exc: VenueError) -> bool:
    """Whether a keyset list's first answer says the route is not served (not a bad query)."""
    return isinstance(exc, VenueNotFound) or (
        isinstance(exc, VenueRejected) and exc.status in KEYSET_REFUSED_STATUSES)


def _unique(rows: list[Any]) -> list[Any]:
    """Rows by id, first seen kept (a cursor the venue ignores repeats its page: agents #227)."""
    seen: dict[str, Any] = {}
    for row in rows:
        seen.setdefault(row.id, row)
    return list(seen.values())


def gamma_list_steps(kind: str, keyset: Callable[[str | None, int], Call[KeysetPage[Any]]],
                     offset_page: Callable[[int, int], Call[list[Any]]], page_size: int,
                     memory: MetadataCache, max_rows: int | None) -> Steps[list[Any]]:
    """Every row of a Gamma list (``max_rows`` first ones when set) over keyset pages;
    the offset list only while the keyset one is refused, a refusal remembered for
    KEYSET_REFUSED_TTL in ``memory`` (ACCOUNTS.md §12: the offset lists are to be retired)."""
    rows: list[Any] = []

    def wanted() -> int:
        return page_size if max_rows is None else min(page_size, max_rows - len(rows))

    refused_key = KEYSET_REFUSED_KEY + kind
    if not memory.contains(refused_key):
        cursor: str | None = None
        try:
            for _ in range(MAX_LIST_PAGES):
                page = yield keyset(cursor, wanted())
                rows.extend(page.items)
                if not page.next_cursor or page.next_cursor == cursor or (
                        max_rows is not None and len(rows) >= max_rows):
                    break
                cursor = page.next_cursor
            return _upto(_unique(rows), max_rows)
        except VenueError as exc:
            if cursor is not None or not _keyset_refused(exc):
                raise  # keyset answered before, or refused this query: a real failure
            memory.set(refused_key, True, KEYSET_REFUSED_TTL)
    offset = 0
    for _ in range(MAX_LIST_PAGES):
        limit = wanted()
        batch = yield offset_page(offset, limit)
        rows.extend(batch)
        if len(batch) < limit or (max_rows is not None and len(rows) >= max_rows):
            break
        offset += len(batch)
    return _upto(_unique(rows), max_rows)


ID_FILTERS = ("condition_ids", "clob_token_ids", "ids")


def list_markets_steps(gamma: GammaApi, memory: MetadataCache, max_rows: int | None,
                       filters: dict[str, Any]) -> Steps[list[Market]]:
    """Every market matching ``filters`` (``GammaApi.markets``' keywords); an id list longer
    than a request takes (100) is asked in parts and the answers joined."""
    key = next((k for k in ID_FILTERS if len(filters.get(k) or ()) > IDS_PER_REQUEST), None)
    if key is None:
        return (yield from _market_walk(gamma, memory, max_rows, market_filters(**filters)))
    values = list(filters[key])
    found: list[Market] = []
    for start in range(0, len(values), IDS_PER_REQUEST):
        part = {**filters, key: values[start:start + IDS_PER_REQUEST]}
        found += yield from _market_walk(gamma, memory, None, market_filters(**part))
    return _upto(_unique(found), max_rows)


def _market_walk(gamma: GammaApi, memory: MetadataCache, max_rows: int | None,
                 query: Pairs) -> Steps[list[Market]]:
    return gamma_list_steps(
        "markets", lambda cursor, limit: gamma.markets_keyset(query, limit=limit, cursor=cursor),
        lambda offset, limit: gamma.markets_offset(query, limit=limit, offset=offset),
        MARKETS_PAGE, memory, max_rows)


def market_by_token_steps(gamma: GammaApi, memory: MetadataCache, ttl: float,
                          token_id: str, fresh: bool = False) -> Steps[Market]:
    """The market holding CLOB token ``token_id`` from the keyset list (the offset one
    while keyset is refused), kept ``ttl`` seconds; VenueNotFound when none does.
    ``fresh`` reads Gamma now (and re-caches), e.g. to see a resolution."""
    key = f"gamma:token:{token_id}"
    known = None if fresh else memory.get(key)
    if known is not None:
        return known
    found = yield from list_markets_steps(gamma, memory, 1, {"clob_token_ids": [token_id]})
    if not found:
        raise VenueNotFound("no such market")
    if ttl > 0:
        memory.set(key, found[0], ttl)
    return found[0]


def list_events_steps(gamma: GammaApi, memory: MetadataCache, max_rows: int | None,
                      filters: dict[str, Any]) -> Steps[list[Event]]:
    """Every event matching ``filters`` (``GammaApi.events``' keywords)."""
    query = event_filters(**filters)
    return gamma_list_steps(
        "events", lambda cursor, limit: gamma.events_keyset(query, limit=limit, cursor=cursor),
        lambda offset, limit: gamma.events_offset(query, limit=limit, offset=offset),
        EVENTS_PAGE, memory, max_rows)


def fee_schedule_steps(clob: ClobApi, market: Market) -> Steps[FeeSchedule | None]:
    """The market's taker fee model: CLOB ``fd``, else Gamma ``feeSchedule`` (None: free)."""
    try:
        return (yield clob.market_parameters(market.condition_id)).fees
    except VenueError:  # the CLOB cannot say now: Gamma's copy of the same schedule
        return gamma_fees(market)


class GammaLookups(GammaApi):
    """The Gamma endpoints, with token lookups over the keyset list like every list walk."""

    def __init__(self, client: _VenueClient) -> None:
        super().__init__(client.transport.run)
        self._client = client

    def market_by_token(self, token_id: str, *, fresh: bool = False) -> Returns[Market]:
        """The market holding CLOB token ``token_id`` (``/markets/keyset?clob_token_ids=``);
        ``fresh`` reads Gamma now (and re-caches), e.g. to see a resolution."""
        client = self._client
        return client.run_steps(market_by_token_steps(
            client._gamma_calls, client.cache, client.config.cache_ttl, token_id, fresh))


class _VenueClient:
    """What both clients are: the endpoint classes over one transport, and the helpers."""

    _transport_class: ClassVar[type[SyncTransport] | type[AsyncTransport]]

    def __init__(
        self,
        config: VenueConfig,
        *,
        http_client: httpx.Client | httpx.AsyncClient | None = None,
        cache: MetadataCache | None = None,
    ) -> None:
        self.config = config
        self.cache = MetadataCache() if cache is None else cache
        self.transport = self._transport_class(config, http_client, self.cache)
        run = self.transport.run
        self.gamma = GammaLookups(self)
        self.clob = ClobApi(run, config.chain_id)
        self.data = DataApi(run)
        self.relayer = RelayerApi(run)
        self.clob_calls = ClobApi(_described, config.chain_id)  # the CLOB's calls, for steps
        self._data_calls = DataApi(_described)
        self._gamma_calls = GammaApi(_described)

    def run_steps(self, steps: Steps[T]) -> Returns[T]:
        """Run a multi-step flow (``venue.relayer``, or the helpers below) to its end."""
        raise NotImplementedError

    def create_or_derive_api_key(self, private_key: str, nonce: int = 0) -> Returns[ApiCreds]:
        """Mint CLOB credentials, or derive the existing ones when the key already has some."""
        return self.run_steps(create_or_derive_steps(self.clob_calls, private_key, nonce))

    def all_open_orders(
        self, creds: ApiCreds, *, market: str | None = None, asset_id: str | None = None
    ) -> Returns[list[OpenOrder]]:
        """Every open order of ``creds``, following ``next_cursor`` to the end."""
        return self.run_steps(open_orders_steps(self.clob_calls, creds, market, asset_id))

    def activity_history(self, user: str, *, types: Sequence[str] | str | None = None,
                         start: int | None = None, max_rows: int | None = None
                         ) -> Returns[list[ActivityItem]]:
        """A wallet's activity since ``start`` over v2 cursors (v1 offsets as a fallback)."""
        return self.run_steps(activity_steps(self._data_calls, user, types, start, max_rows))

    def all_positions(self, user: str, *, status: str | None = None
                      ) -> Returns[list[Position]]:
        """Every position of ``user`` with its status, over v2 cursors (v1 offsets as a
        fallback); ``status`` filters on the venue's side."""
        return self.run_steps(positions_steps(self._data_calls, user, status))

    def list_markets(self, *, max_rows: int | None = None, **filters: Any
                     ) -> Returns[list[Market]]:
        """Every Gamma market matching ``filters`` (``gamma.markets``' keywords, no paging),
        or the first ``max_rows``: keyset pages, the offset list while keyset is refused."""
        return self.run_steps(list_markets_steps(self._gamma_calls, self.cache, max_rows,
                                                 filters))

    def list_events(self, *, max_rows: int | None = None, **filters: Any
                    ) -> Returns[list[Event]]:
        """Every Gamma event matching ``filters`` (``gamma.events``' keywords, no paging),
        or the first ``max_rows``: keyset pages, the offset list while keyset is refused."""
        return self.run_steps(list_events_steps(self._gamma_calls, self.cache, max_rows,
                                                filters))

    def cancel_many(self, creds: ApiCreds, order_ids: Sequence[str]) -> Returns[CancelResult]:
        """Cancel any number of orders, split into the venue's 1,000-id requests."""
        return self.run_steps(cancel_many_steps(self.clob_calls, creds, list(order_ids)))

    def cancel_all_orders(self, creds: ApiCreds) -> Returns[CancelResult]:
        """Cancel every open order of ``creds``, split so that no request drives the
        signer's cancel bucket below zero (``cancel_all_steps``)."""
        budgets = self.transport.budgets
        signer = creds.address
        bucket = (lambda: None) if budgets is None else (lambda: budgets.cancel_bucket(signer))
        return self.run_steps(cancel_all_steps(self.clob_calls, creds, bucket))

    def fee_schedule(self, market: Market) -> Returns[FeeSchedule | None]:
        """The market's taker fee model: CLOB ``fd``, else Gamma ``feeSchedule`` (None: free)."""
        return self.run_steps(fee_schedule_steps(self.clob_calls, market))


class VenueClient(_VenueClient):
    """Blocking client: ``.gamma``, ``.clob``, ``.data``, ``.relayer`` plus the helpers."""

    _transport_class = SyncTransport
    transport: SyncTransport

    def run_steps(self, steps: Steps[T]) -> T:
        """Run a multi-step flow (``venue.relayer``, or the helpers above) to its end."""
        return run_steps(steps, self.transport.run)

    def close(self) -> None:
        """Close pooled connections."""
        self.transport.close()

    def __enter__(self) -> VenueClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class AsyncVenueClient(_VenueClient):
    """Async client (trio or asyncio): the same endpoints and helpers, awaited; the feeds."""

    _transport_class = AsyncTransport
    transport: AsyncTransport

    def run_steps(self, steps: Steps[T]) -> Awaitable[T]:
        """Run a multi-step flow (``venue.relayer``, or the helpers above) to its end."""
        return arun_steps(steps, self.transport.run)

    def activity_feed(
        self, wallets: Iterable[str] | None = None, **options: Any
    ) -> AbstractAsyncContextManager[ActivityFeed]:
        """``async with client.activity_feed(wallets) as feed: async for trade in feed``."""
        if not self.config.rtds_url:
            raise ValueError("no RTDS URL configured; detect trades by polling")
        return open_activity_feed(self.config.rtds_url, wallets, **options)

    def book_feed(
        self, token_ids: Iterable[str] = (), **options: Any
    ) -> AbstractAsyncContextManager[BookFeed]:
        """``async with client.book_feed(tokens) as books: books.book(token)`` (None = use REST)."""
        if not self.config.market_ws_url:
            raise ValueError("no market channel URL configured; read books with GET /book")
        return open_book_feed(self.config.market_ws_url, token_ids, **options)

    async def aclose(self) -> None:
        """Close pooled connections."""
        await self.transport.aclose()

    async def __aenter__(self) -> AsyncVenueClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()
