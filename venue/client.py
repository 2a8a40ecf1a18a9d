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
from venue.gamma import GammaApi, Returns
from venue.http import AsyncTransport, Call, SyncTransport
from venue.market_feed import BookFeed, open_book_feed
from venue.models import ActivityItem, ApiCreds, CancelResult, FeeSchedule, Market, OpenOrder
from venue.rate_tiers import cancel_all_cost
from venue.relayer import RelayerApi, Steps, arun_steps, run_steps
from venue.rtds import ActivityFeed, open_activity_feed

T = TypeVar("T")
MAX_ORDER_PAGES = 50  # guards against a venue that never sends the end cursor
V1_OFFSET_CAP = 10_000  # Data API v1 ``offset`` stops here (ACCOUNTS.md §11)
HISTORY_PAGE = 500


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


def activity_steps(data: DataApi, user: str, types: Sequence[str] | str | None,
                   start: int | None,
                   max_rows: int | None) -> Steps[list[ActivityItem]]:
    """A wallet's activity since ``start`` (all of it, or ``max_rows`` newest-first rows):
    Data API v2 cursor pages, not capped at 10,000 rows; v1 ``offset`` pages only when the
    v2 route is refused (ACCOUNTS.md §11: v1 stops at offset 10,000)."""
    rows: list[ActivityItem] = []
    cursor: str | None = None
    try:
        while True:
            page = yield data.activity_page(user, cursor=cursor, limit=HISTORY_PAGE,
                                            start=start, types=types)
            rows.extend(page.items)
            if not page.has_more or not page.next_cursor or page.next_cursor == cursor or (
                    max_rows is not None and len(rows) >= max_rows):
                return rows[:max_rows] if max_rows is not None else rows
            cursor = page.next_cursor
    except (VenueNotFound, VenueRejected):
        if cursor is not None:
            raise  # v2 answered before: a real failure, not a missing route
    rows = []
    offset = 0
    while offset <= V1_OFFSET_CAP:  # v1 fallback: past its cap it repeats the last page
        batch = yield data.activity(user, types=types, start=start, limit=HISTORY_PAGE,
                                    offset=offset)
        rows.extend(batch)
        if len(batch) < HISTORY_PAGE or (max_rows is not None and len(rows) >= max_rows):
            break
        offset += len(batch)
    return rows[:max_rows] if max_rows is not None else rows


def fee_schedule_steps(clob: ClobApi, market: Market) -> Steps[FeeSchedule | None]:
    """The market's taker fee model: CLOB ``fd``, else Gamma ``feeSchedule`` (None: free)."""
    try:
        return (yield clob.market_parameters(market.condition_id)).fees
    except VenueError:  # the CLOB cannot say now: Gamma's copy of the same schedule
        return gamma_fees(market)


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
        self.gamma = GammaApi(run)
        self.clob = ClobApi(run, config.chain_id)
        self.data = DataApi(run)
        self.relayer = RelayerApi(run)
        self._calls = ClobApi(_described, config.chain_id)  # the CLOB's calls, for the steps
        self._data_calls = DataApi(_described)

    def run_steps(self, steps: Steps[T]) -> Returns[T]:
        """Run a multi-step flow (``venue.relayer``, or the helpers below) to its end."""
        raise NotImplementedError

    def create_or_derive_api_key(self, private_key: str, nonce: int = 0) -> Returns[ApiCreds]:
        """Mint CLOB credentials, or derive the existing ones when the key already has some."""
        return self.run_steps(create_or_derive_steps(self._calls, private_key, nonce))

    def all_open_orders(
        self, creds: ApiCreds, *, market: str | None = None, asset_id: str | None = None
    ) -> Returns[list[OpenOrder]]:
        """Every open order of ``creds``, following ``next_cursor`` to the end."""
        return self.run_steps(open_orders_steps(self._calls, creds, market, asset_id))

    def activity_history(self, user: str, *, types: Sequence[str] | str | None = None,
                         start: int | None = None, max_rows: int | None = None
                         ) -> Returns[list[ActivityItem]]:
        """A wallet's activity since ``start`` over v2 cursors (v1 offsets as a fallback)."""
        return self.run_steps(activity_steps(self._data_calls, user, types, start, max_rows))

    def cancel_many(self, creds: ApiCreds, order_ids: Sequence[str]) -> Returns[CancelResult]:
        """Cancel any number of orders, split into the venue's 1,000-id requests."""
        return self.run_steps(cancel_many_steps(self._calls, creds, list(order_ids)))

    def cancel_all_orders(self, creds: ApiCreds) -> Returns[CancelResult]:
        """Cancel every open order of ``creds``, split so that no request drives the
        signer's cancel bucket below zero (``cancel_all_steps``)."""
        budgets = self.transport.budgets
        signer = creds.address
        bucket = (lambda: None) if budgets is None else (lambda: budgets.cancel_bucket(signer))
        return self.run_steps(cancel_all_steps(self._calls, creds, bucket))

    def fee_schedule(self, market: Market) -> Returns[FeeSchedule | None]:
        """The market's taker fee model: CLOB ``fd``, else Gamma ``feeSchedule`` (None: free)."""
        return self.run_steps(fee_schedule_steps(self._calls, market))


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
