"""The venue facade: ``VenueClient`` (blocking, Flask/RQ threads) and ``AsyncVenueClient``
(the Trio worker), each bundling Gamma, CLOB and Data API over one pooled connection set.

The endpoint classes are shared; only the few multi-step helpers below exist in both a
sync and an async form.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractAsyncContextManager
from decimal import Decimal
from types import TracebackType
from typing import Any, TypeVar

import httpx

from venue.cache import MetadataCache
from venue.clob import INITIAL_CURSOR, ClobApi
from venue.config import VenueConfig
from venue.data_api import DataApi
from venue.errors import VenueError, VenueRejected
from venue.gamma import GammaApi
from venue.http import AsyncTransport, SyncTransport
from venue.market_feed import BookFeed, open_book_feed
from venue.models import ApiCreds, FeeSchedule, Market, OpenOrder
from venue.relayer import RelayerApi, Steps, arun_steps, run_steps
from venue.rtds import ActivityFeed, open_activity_feed
from venue.signing import (
    SIGNATURE_TYPE_EOA,
    SignedOrder,
    build_signed_market_order,
    build_signed_order,
)

T = TypeVar("T")
MAX_ORDER_PAGES = 50  # guards against a venue that never sends the end cursor


def gamma_fees(market: Market) -> FeeSchedule | None:
    """Gamma's ``feeSchedule`` of ``market`` (None when its fees are off)."""
    return market.fee_schedule if market.fees_enabled else None


def _sign_kwargs(config: VenueConfig) -> dict[str, Any]:
    return {
        "exchange_address": config.exchange_address,
        "neg_risk_exchange_address": config.neg_risk_exchange_address,
    }


class VenueClient:
    """Blocking client: ``.gamma``, ``.clob``, ``.data`` plus order helpers."""

    def __init__(
        self,
        config: VenueConfig,
        *,
        http_client: httpx.Client | None = None,
        cache: MetadataCache | None = None,
    ) -> None:
        self.config = config
        self.cache = MetadataCache() if cache is None else cache
        self.transport = SyncTransport(config, http_client, self.cache)
        self.gamma = GammaApi(self.transport.run)
        self.clob = ClobApi(self.transport.run, config.chain_id)
        self.data = DataApi(self.transport.run)
        self.relayer = RelayerApi(self.transport.run)

    def run_steps(self, steps: Steps[T]) -> T:
        """Run a multi-step relayer flow (``venue.relayer``) to its end."""
        return run_steps(steps, self.transport.run)

    def create_or_derive_api_key(self, private_key: str, nonce: int = 0) -> ApiCreds:
        """Mint CLOB credentials, or derive the existing ones when the key already has some."""
        try:
            return self.clob.create_api_key(private_key, nonce)
        except VenueRejected:
            return self.clob.derive_api_key(private_key, nonce)

    def all_open_orders(
        self, creds: ApiCreds, *, market: str | None = None, asset_id: str | None = None
    ) -> list[OpenOrder]:
        """Every open order of ``creds``, following ``next_cursor`` to the end."""
        orders: list[OpenOrder] = []
        cursor = INITIAL_CURSOR
        for _ in range(MAX_ORDER_PAGES):
            page = self.clob.open_orders(creds, market=market, asset_id=asset_id,
                                         next_cursor=cursor)
            orders.extend(page.orders)
            if page.is_last or page.next_cursor == cursor:
                break
            cursor = page.next_cursor
        return orders

    def fee_schedule(self, market: Market) -> FeeSchedule | None:
        """The market's taker fee model: CLOB ``fd``, else Gamma ``feeSchedule`` (None: free)."""
        try:
            return self.clob.market_fees(market.condition_id)
        except VenueError:  # the CLOB cannot say now: Gamma's copy of the same schedule
            return gamma_fees(market)

    def build_order(
        self,
        private_key: str,
        token_id: str,
        side: str,
        price: Decimal,
        size: Decimal,
        order_type: str = "GTC",
        *,
        signature_type: int = SIGNATURE_TYPE_EOA,
        funder: str | None = None,
        expiration: int = 0,
        tick_size: Decimal | None = None,
        neg_risk: bool | None = None,
    ) -> SignedOrder:
        """Sign a limit order, looking up tick size and neg-risk (cached) when not given."""
        tick = self.clob.tick_size(token_id) if tick_size is None else tick_size
        risky = self.clob.neg_risk(token_id) if neg_risk is None else neg_risk
        return build_signed_order(
            private_key, self.config.chain_id, token_id, side, price, size, order_type,
            tick, risky, signature_type, funder, expiration, **_sign_kwargs(self.config),
        )

    def build_market_order(
        self,
        private_key: str,
        token_id: str,
        side: str,
        amount: Decimal,
        worst_price: Decimal,
        order_type: str = "FOK",
        *,
        signature_type: int = SIGNATURE_TYPE_EOA,
        funder: str | None = None,
        tick_size: Decimal | None = None,
        neg_risk: bool | None = None,
    ) -> SignedOrder:
        """Sign a FOK/FAK order (BUY: pUSD to spend; SELL: shares), looking up market params."""
        tick = self.clob.tick_size(token_id) if tick_size is None else tick_size
        risky = self.clob.neg_risk(token_id) if neg_risk is None else neg_risk
        return build_signed_market_order(
            private_key, self.config.chain_id, token_id, side, amount, worst_price,
            order_type, tick, risky, signature_type, funder, **_sign_kwargs(self.config),
        )

    def close(self) -> None:
        """Close pooled connections."""
        self.transport.close()

    def __enter__(self) -> VenueClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class AsyncVenueClient:
    """Async client (trio or asyncio): same ``.gamma``/``.clob``/``.data``, awaited."""

    def __init__(
        self,
        config: VenueConfig,
        *,
        http_client: httpx.AsyncClient | None = None,
        cache: MetadataCache | None = None,
    ) -> None:
        self.config = config
        self.cache = MetadataCache() if cache is None else cache
        self.transport = AsyncTransport(config, http_client, self.cache)
        self.gamma = GammaApi(self.transport.run)
        self.clob = ClobApi(self.transport.run, config.chain_id)
        self.data = DataApi(self.transport.run)
        self.relayer = RelayerApi(self.transport.run)

    async def run_steps(self, steps: Steps[T]) -> T:
        """Run a multi-step relayer flow (``venue.relayer``) to its end."""
        return await arun_steps(steps, self.transport.run)

    async def create_or_derive_api_key(self, private_key: str, nonce: int = 0) -> ApiCreds:
        """Mint CLOB credentials, or derive the existing ones when the key already has some."""
        try:
            return await self.clob.create_api_key(private_key, nonce)
        except VenueRejected:
            return await self.clob.derive_api_key(private_key, nonce)

    async def all_open_orders(
        self, creds: ApiCreds, *, market: str | None = None, asset_id: str | None = None
    ) -> list[OpenOrder]:
        """Every open order of ``creds``, following ``next_cursor`` to the end."""
        orders: list[OpenOrder] = []
        cursor = INITIAL_CURSOR
        for _ in range(MAX_ORDER_PAGES):
            page = await self.clob.open_orders(creds, market=market, asset_id=asset_id,
                                               next_cursor=cursor)
            orders.extend(page.orders)
            if page.is_last or page.next_cursor == cursor:
                break
            cursor = page.next_cursor
        return orders

    async def fee_schedule(self, market: Market) -> FeeSchedule | None:
        """The market's taker fee model: CLOB ``fd``, else Gamma ``feeSchedule`` (None: free)."""
        try:
            return await self.clob.market_fees(market.condition_id)
        except VenueError:  # the CLOB cannot say now: Gamma's copy of the same schedule
            return gamma_fees(market)

    async def build_order(
        self,
        private_key: str,
        token_id: str,
        side: str,
        price: Decimal,
        size: Decimal,
        order_type: str = "GTC",
        *,
        signature_type: int = SIGNATURE_TYPE_EOA,
        funder: str | None = None,
        expiration: int = 0,
        tick_size: Decimal | None = None,
        neg_risk: bool | None = None,
    ) -> SignedOrder:
        """Sign a limit order, looking up tick size and neg-risk (cached) when not given."""
        tick = await self.clob.tick_size(token_id) if tick_size is None else tick_size
        risky = await self.clob.neg_risk(token_id) if neg_risk is None else neg_risk
        return build_signed_order(
            private_key, self.config.chain_id, token_id, side, price, size, order_type,
            tick, risky, signature_type, funder, expiration, **_sign_kwargs(self.config),
        )

    async def build_market_order(
        self,
        private_key: str,
        token_id: str,
        side: str,
        amount: Decimal,
        worst_price: Decimal,
        order_type: str = "FOK",
        *,
        signature_type: int = SIGNATURE_TYPE_EOA,
        funder: str | None = None,
        tick_size: Decimal | None = None,
        neg_risk: bool | None = None,
    ) -> SignedOrder:
        """Sign a FOK/FAK order (BUY: pUSD to spend; SELL: shares), looking up market params."""
        tick = await self.clob.tick_size(token_id) if tick_size is None else tick_size
        risky = await self.clob.neg_risk(token_id) if neg_risk is None else neg_risk
        return build_signed_market_order(
            private_key, self.config.chain_id, token_id, side, amount, worst_price,
            order_type, tick, risky, signature_type, funder, **_sign_kwargs(self.config),
        )

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
