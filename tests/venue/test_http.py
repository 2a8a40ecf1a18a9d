"""Transport behaviour under injected faults (httpx.MockTransport), sync and under trio."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal

import httpx
import pytest
import trio

from tests.venue.conftest import sample_text
from venue.cache import MetadataCache
from venue.client import AsyncVenueClient, VenueClient, gamma_fees
from venue.clob import ClobApi
from venue.config import VenueConfig
from venue.errors import (
    VenueNotFound,
    VenueRejected,
    VenueTimeout,
    VenueUnavailable,
)
from venue.http import AsyncTransport, SyncTransport, parse_retry_after
from venue.models import ApiCreds, Side
from venue.order_signer import OrderSigner
from venue.parse.values import MalformedResponse
from venue.signing import OrderKey, build_signed_order, l2_headers

CONFIG = VenueConfig(
    gamma_url="https://gamma.test", clob_url="https://clob.test/", data_url="https://data.test",
    max_retries=2, backoff_base=0.001, backoff_cap=0.002, max_retry_after=3.0,
)
KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
ADDRESS = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
CREDS = ApiCreds("api-key", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "phrase", ADDRESS)
TOKEN = "23305969272951306317157739183583008201155714184462027894470739210983097393455"

Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """A scripted venue: answers from a list, and remembers every request it saw."""

    def __init__(self, *answers: httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []
        self.tier_reads: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/user/rate-limit-tier":
            # asked before a signer's first order or cancel (ACCOUNTS.md §12): kept apart
            self.tier_reads.append(request)
            return httpx.Response(200, json={"tier": "standard"})
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


def keyset_page(name: str) -> httpx.Response:
    """A Gamma list sample as one keyset page (the last: no ``next_cursor``)."""
    return httpx.Response(200, content=b'{"markets": ' + sample_text(name).encode() + b"}")


def ok(name: str) -> httpx.Response:
    return httpx.Response(200, content=sample_text(name).encode())


def client_with(handler: Handler, cache: MetadataCache | None = None) -> VenueClient:
    return VenueClient(CONFIG, http_client=httpx.Client(transport=httpx.MockTransport(handler)),
                       cache=cache)


def test_get_builds_url_and_parses_decimals() -> None:
    venue = Recorder(ok("clob-book.json"))
    book = client_with(venue).clob.book(TOKEN)
    assert str(book.last_trade_price) == "0.420"
    [request] = venue.requests
    assert str(request.url) == f"https://clob.test/book?token_id={TOKEN}"
    assert request.headers["accept"] == "application/json"


def test_gamma_and_data_query_parameters() -> None:
    venue = Recorder(httpx.Response(200, json=[]))
    client = client_with(venue)
    client.gamma.markets(condition_ids=["0x1", "0x2"], active=True, closed=False, limit=5)
    client.data.trades(user="0xabc", limit=10)
    client.data.activity("0xabc", types=["TRADE"], start=1790000000)
    markets_q, trades_q, activity_q = (r.url.params for r in venue.requests)
    assert markets_q.get_list("condition_ids") == ["0x1", "0x2"]
    assert markets_q["active"] == "true" and markets_q["closed"] == "false"
    assert trades_q["takerOnly"] == "false" and trades_q["user"] == "0xabc"
    assert activity_q["type"] == "TRADE" and activity_q["start"] == "1790000000"
    assert venue.requests[2].url.path == "/activity"


def test_5xx_is_retried_then_succeeds() -> None:
    venue = Recorder(httpx.Response(503), httpx.Response(502), ok("clob-midpoint.json"))
    assert client_with(venue).clob.midpoint(TOKEN) == Decimal("0.0455")
    assert len(venue.requests) == 3


def test_5xx_exhausts_retries_into_venue_unavailable() -> None:
    venue = Recorder(httpx.Response(500, json={"error": "boom"}))
    with pytest.raises(VenueUnavailable) as caught:
        client_with(venue).clob.midpoint(TOKEN)
    assert not isinstance(caught.value, VenueTimeout)
    assert "boom" in str(caught.value)
    assert len(venue.requests) == 1 + CONFIG.max_retries


def test_read_timeouts_retry_then_raise_venue_timeout() -> None:
    venue = Recorder(httpx.ReadTimeout("slow"))
    with pytest.raises(VenueTimeout):
        client_with(venue).clob.price(TOKEN, "buy")
    assert len(venue.requests) == 3
    assert venue.requests[0].url.params["side"] == "BUY"


def test_connection_errors_map_to_unavailable() -> None:
    venue = Recorder(httpx.ConnectError("refused"), ok("clob-price.json"))
    assert client_with(venue).clob.price(TOKEN, "BUY") == Decimal("0.045")
    venue = Recorder(httpx.ConnectError("refused"))
    with pytest.raises(VenueUnavailable, match="ConnectError"):
        client_with(venue).clob.price(TOKEN, "BUY")


def test_429_short_retry_after_is_honoured() -> None:
    venue = Recorder(httpx.Response(429, headers={"Retry-After": "1"}), ok("clob-price.json"))
    slept: list[float] = []
    transport = SyncTransport(CONFIG, httpx.Client(transport=httpx.MockTransport(venue)),
                              sleep=slept.append)
    assert ClobApi(transport.run, 137).price(TOKEN, "BUY") == Decimal("0.045")
    assert slept == [1.0]


def test_429_long_retry_after_fails_fast_with_retry_after() -> None:
    venue = Recorder(httpx.Response(429, headers={"Retry-After": "120"}))
    with pytest.raises(VenueUnavailable) as caught:
        client_with(venue).clob.price(TOKEN, "BUY")
    assert caught.value.retry_after == 120
    assert len(venue.requests) == 1


def test_404_is_not_found_without_retry() -> None:
    venue = Recorder(httpx.Response(404, json={"error": "market not found"}))
    with pytest.raises(VenueNotFound, match="market not found"):
        client_with(venue).gamma.market_by_slug("nope")
    assert len(venue.requests) == 1
    assert venue.requests[0].url.path == "/markets/slug/nope"


def test_4xx_is_rejected_with_status_and_body() -> None:
    venue = Recorder(httpx.Response(400, json={"error": "invalid signature"}))
    order = build_signed_order(KEY, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("5"))
    with pytest.raises(VenueRejected) as caught:
        client_with(venue).clob.post_order(CREDS, order)
    assert caught.value.status == 400
    assert caught.value.body == {"error": "invalid signature"}
    assert str(caught.value) == "invalid signature"
    assert len(venue.requests) == 1


def test_post_order_timeout_is_not_retried() -> None:
    venue = Recorder(httpx.ReadTimeout("no answer"))
    order = build_signed_order(KEY, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("5"))
    with pytest.raises(VenueTimeout):
        client_with(venue).clob.post_order(CREDS, order)
    assert len(venue.requests) == 1


@pytest.mark.parametrize(("status", "error"), [(500, VenueUnavailable), (504, VenueTimeout)])
def test_post_order_5xx_is_not_retried(status: int, error: type[Exception]) -> None:
    venue = Recorder(httpx.Response(status))
    order = build_signed_order(KEY, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("5"))
    with pytest.raises(error):
        client_with(venue).clob.post_order(CREDS, order)
    assert len(venue.requests) == 1


def test_post_order_sends_exactly_the_hmac_signed_body() -> None:
    venue = Recorder(ok("clob-post-order-response.json"))
    order = build_signed_order(KEY, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("5"), "FAK")
    result = client_with(venue).clob.post_order(CREDS, order)
    assert result.making_amount == Decimal("1.519999")
    [request] = venue.requests
    assert request.method == "POST" and request.url.path == "/order"
    body = request.content.decode()
    sent = json.loads(body)
    assert sent["owner"] == "api-key" and sent["orderType"] == "FAK"
    assert sent["order"]["signature"] == order.signature
    expected = l2_headers(CREDS, "POST", "/order", body,
                          timestamp=int(request.headers["POLY_TIMESTAMP"]))
    for name, value in expected.items():
        assert request.headers[name] == value


def test_cancel_and_open_orders_requests() -> None:
    venue = Recorder(ok("clob-cancel-response.json"))
    client = client_with(venue)
    result = client.clob.cancel_order(CREDS, "0xabc")
    client.clob.cancel_all(CREDS)
    assert result.canceled == ("0xabcdef1234567890abcdef1234567890abcdef12",)
    cancel, cancel_all = venue.requests
    assert cancel.method == "DELETE" and cancel.content == b'{"orderID":"0xabc"}'
    assert cancel_all.url.path == "/cancel-all" and cancel_all.content == b""
    pages = Recorder(
        ok("clob-open-orders.json"),
        httpx.Response(200, json={"limit": 100, "next_cursor": "LTE=", "count": 0, "data": []}),
    )
    orders = client_with(pages).all_open_orders(CREDS)
    assert len(orders) == 2
    first, second = pages.requests
    assert first.url.params["next_cursor"] == "MA==" and second.url.params["next_cursor"] == "MTAw"
    assert first.url.path == "/data/orders" and "POLY_SIGNATURE" in first.headers


def test_create_or_derive_api_key_falls_back_to_derive() -> None:
    venue = Recorder(httpx.Response(400, json={"error": "could not create api key"}),
                     ok("clob-derive-api-key-response.json"))
    creds = client_with(venue).create_or_derive_api_key(KEY)
    assert creds.api_key == "test-api-key" and creds.address == ADDRESS
    create, derive = venue.requests
    assert (create.method, create.url.path) == ("POST", "/auth/api-key")
    assert (derive.method, derive.url.path) == ("GET", "/auth/derive-api-key")
    assert derive.headers["POLY_ADDRESS"] == ADDRESS and derive.headers["POLY_NONCE"] == "0"


def test_malformed_success_body_is_unavailable() -> None:
    venue = Recorder(httpx.Response(200, content=b"<html>oops</html>"))
    with pytest.raises(MalformedResponse):
        client_with(venue).clob.midpoint(TOKEN)
    venue = Recorder(httpx.Response(200, json={"history": [{"x": 1}]}))
    with pytest.raises(VenueUnavailable, match="unreadable"):
        client_with(venue).clob.prices_history(TOKEN, interval="1w")


def test_metadata_cache_spares_repeat_calls() -> None:
    venue = Recorder(ok("clob-tick-size.json"))
    client = client_with(venue)
    assert [client.clob.tick_size(TOKEN) for _ in range(50)] == [Decimal("0.001")] * 50
    assert len(venue.requests) == 1
    markets = Recorder(keyset_page("gamma-markets.json"))
    client = client_with(markets)
    schedule = gamma_fees(client.gamma.market_by_token(TOKEN))
    assert schedule is not None and schedule.rate == Decimal("0.05")
    assert client.gamma.market_by_token(TOKEN).slug == "unl-nor-den-2026-09-24-nor"
    assert len(markets.requests) == 1
    assert markets.requests[0].url.path == "/markets/keyset"
    assert markets.requests[0].url.params["clob_token_ids"] == TOKEN


def test_market_parameters_are_looked_up_once_and_sign_for_their_exchange() -> None:
    def venue(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if request.url.path == "/tick-size":
            return ok("clob-tick-size.json")
        return httpx.Response(200, json={"neg_risk": True})

    seen: list[str] = []
    client = client_with(venue)
    signer = OrderSigner.for_venue(client.config, OrderKey(KEY))
    for _ in range(3):
        order = signer.limit(TOKEN, Side.BUY, Decimal("0.123"), Decimal("10"),
                             tick_size=client.clob.tick_size(TOKEN),
                             neg_risk=client.clob.neg_risk(TOKEN))
    assert order.exchange_address == "0xe2222d279d744050d28e00520010520000310F59"
    assert sorted(seen) == ["/neg-risk", "/tick-size"]


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after("7") == 7
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10


# --- async, under trio -------------------------------------------------------------------


def test_async_client_under_trio_with_faults() -> None:
    async def main() -> None:
        venue = Recorder(httpx.Response(503), ok("clob-book.json"))
        async with AsyncVenueClient(
            CONFIG, http_client=httpx.AsyncClient(transport=httpx.MockTransport(venue))
        ) as client:
            book = await client.clob.book(TOKEN)
            assert book.best_bid == Decimal("0.57")
            assert len(venue.requests) == 2
        post = Recorder(httpx.WriteTimeout("stuck"))
        transport = AsyncTransport(
            CONFIG, httpx.AsyncClient(transport=httpx.MockTransport(post))
        )
        order = build_signed_order(KEY, 137, TOKEN, "SELL", Decimal("0.5"), Decimal("5"))
        with pytest.raises(VenueTimeout):
            await ClobApi(transport.run, 137).post_order(CREDS, order)
        assert len(post.requests) == 1
        await transport.aclose()

    trio.run(main)


def test_async_client_helpers_take_the_same_steps() -> None:
    """create-or-derive, open-order paging and the fee fallback, awaited under trio."""
    async def main() -> None:
        venue = Recorder(
            httpx.Response(400, json={"error": "could not create api key"}),
            ok("clob-derive-api-key-response.json"),
            ok("clob-open-orders.json"),
            httpx.Response(200, json={"limit": 100, "next_cursor": "LTE=", "count": 0,
                                      "data": []}),
            keyset_page("gamma-markets.json"),
            httpx.Response(404, json={"error": "market not found"}),
        )
        async with AsyncVenueClient(
            CONFIG, http_client=httpx.AsyncClient(transport=httpx.MockTransport(venue))
        ) as client:
            creds = await client.create_or_derive_api_key(KEY)
            assert creds.api_key == "test-api-key" and creds.address == ADDRESS
            assert len(await client.all_open_orders(CREDS)) == 2
            market = await client.gamma.market_by_token(TOKEN)
            schedule = await client.fee_schedule(market)  # the CLOB cannot say: Gamma's
            assert schedule == gamma_fees(market) and schedule is not None
        paths = [(r.method, r.url.path) for r in venue.requests]
        assert paths == [("POST", "/auth/api-key"), ("GET", "/auth/derive-api-key"),
                         ("GET", "/data/orders"), ("GET", "/data/orders"),
                         ("GET", "/markets/keyset"),
                         ("GET", f"/clob-markets/{market.condition_id}")]

    trio.run(main)
