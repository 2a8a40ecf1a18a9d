"""The client over real HTTP on 127.0.0.1: sync, under trio and under asyncio, with keep-alive."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

import pytest
import trio

from tests.local_http import serving
from tests.venue.conftest import sample_text
from venue.client import AsyncVenueClient, VenueClient
from venue.config import VenueConfig
from venue.errors import VenueNotFound, VenueTimeout

ROUTES = {
    "/gamma/markets/slug/xi-jinping-out-before-2027": "gamma-market-by-slug.json",
    "/gamma/markets": "gamma-markets.json",
    "/gamma/events": "gamma-events.json",
    "/gamma/public-search": "gamma-public-search.json",
    "/clob/book": "clob-book.json",
    "/clob/tick-size": "clob-tick-size.json",
    "/clob/prices-history": "clob-prices-history.json",
    "/data/activity": "data-activity.json",
    "/data/trades": "data-trades.json",
    "/data/positions": "data-positions.json",
    "/data/v1/leaderboard": "data-leaderboard.json",
    "/data/v2/activity": "data-v2-activity.json",
}


class SampleVenue(BaseHTTPRequestHandler):
    """Serves the real samples at the sandbox's path layout; ``/clob/slow`` never hurries."""

    protocol_version = "HTTP/1.1"  # keep-alive, so connection reuse is observable
    seen: list[tuple[str, dict[str, list[str]], int]] = []

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        self.seen.append((url.path, parse_qs(url.query), self.client_address[1]))
        if url.path == "/clob/midpoint":
            threading.Event().wait(1.0)
        name = ROUTES.get(url.path)
        body = sample_text(name).encode() if name else b'{"error":"not found"}'
        self.send_response(200 if name else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def venue_url() -> Iterator[str]:
    SampleVenue.seen = []
    with serving(SampleVenue) as url:
        yield url


def test_sync_client_against_real_http(venue_url: str) -> None:
    config = VenueConfig.for_sandbox(venue_url, timeout=0.3, max_retries=0)
    assert config.rtds_url == venue_url.replace("http", "ws") + "/rtds"
    with VenueClient(config) as client:
        market = client.gamma.market_by_slug("xi-jinping-out-before-2027")
        assert market.id == "559651"
        assert client.gamma.markets(active=True)[0].slug == "unl-nor-den-2026-09-24-nor"
        assert client.gamma.events(slug="x")[0].markets[1].slug
        assert client.gamma.search("bitcoin").total_results == 46940
        assert client.clob.book("1").best_ask == Decimal("0.58")
        assert client.clob.tick_size("1") == Decimal("0.001")
        assert client.clob.prices_history("1", interval="1w")[0].p == Decimal("0.515")
        assert client.data.activity("0xabc")[0].type == "REDEEM"
        assert client.data.trades(user="0xabc")[0].size == Decimal("8643")
        assert client.data.positions("0xabc")[0].size == Decimal("162963.4451")
        assert client.data.leaderboard(time_period="DAY")[0].rank == 1
        assert client.data.activity_page("0xabc", limit=2).has_more
        with pytest.raises(VenueNotFound):
            client.gamma.market_by_slug("missing")
        with pytest.raises(VenueTimeout):
            client.clob.midpoint("1")
    paths = [path for path, _, _ in SampleVenue.seen]
    assert "/data/v1/leaderboard" in paths and "/gamma/public-search" in paths
    trades_query = next(q for p, q, _ in SampleVenue.seen if p == "/data/trades")
    assert trades_query["takerOnly"] == ["false"]
    # Keep-alive: the first requests share one client socket.
    ports = {port for _, _, port in SampleVenue.seen[:5]}
    assert len(ports) == 1


async def _exercise_async(config: VenueConfig) -> None:
    async with AsyncVenueClient(config) as client:
        book = await client.clob.book("1")
        assert book.computed_hash() == book.hash
        market = await client.gamma.market_by_slug("xi-jinping-out-before-2027")
        assert market.outcome_prices[0] == Decimal("0.0455")
        trades = await client.data.trades(user="0xabc")
        assert trades[1].price == Decimal("0.999")
        page = await client.data.activity_page("0xabc")
        assert page.items[0].usdc_size == Decimal("12.16184")
        try:
            await client.clob.midpoint("1")
        except VenueTimeout:
            pass
        else:
            raise AssertionError("expected a timeout")


def test_async_client_under_trio_real_http(venue_url: str) -> None:
    config = VenueConfig.for_sandbox(venue_url, timeout=0.3, max_retries=0)
    trio.run(_exercise_async, config)
    assert len(SampleVenue.seen) == 5
    assert len({port for _, _, port in SampleVenue.seen[:4]}) == 1  # one pooled connection


def test_async_client_under_asyncio_real_http(venue_url: str) -> None:
    config = VenueConfig.for_sandbox(venue_url, timeout=0.3, max_retries=0)
    asyncio.run(_exercise_async(config))
