"""Market channel parsing (the real samples) and BookFeed against a scripted websocket server:
subscribe messages, applying changes, seeding, keepalive failure, resubscribe on reconnect."""

from __future__ import annotations

import json
from decimal import Decimal
from functools import partial
from typing import Any

import pytest
import trio
from websockets.exceptions import ConnectionClosed

import config
from services.platform import venue_access as services_venues
from tests.venue.conftest import sample, sample_text
from venue.client import AsyncVenueClient
from venue.config import VenueConfig
from venue.market_feed import BookFeed, open_book_feed
from venue.models import LastTradePrice, OrderBook, PriceChange, TickSizeChange
from venue.parse.clob import parse_book
from venue.parse.feeds import parse_market_frame
from venue.parse.values import MalformedResponse

D = Decimal
BOOK = sample("ws-market-book.json")
ASSET = BOOK["asset_id"]
OTHER = "104425493878736059469967522531475345635535129482242136756374819053652959839920"


def _change(price: str, size: str, side: str) -> dict[str, Any]:
    return {"asset_id": ASSET, "price": price, "size": size, "side": side, "hash": "ab" * 20,
            "best_bid": "0.07", "best_ask": "0.08"}


def test_parse_market_frames_from_the_samples() -> None:
    [book] = parse_market_frame(sample_text("ws-market-book.json"))
    assert isinstance(book, OrderBook) and book.asset_id == ASSET
    assert book.min_order_size is None and book.neg_risk is None  # the WS book omits them
    assert book.bids[-1].price == D("0.07") and book.asks[-1].price == D("0.08")  # best last
    changes = parse_market_frame(sample_text("ws-market-price-change.json"))
    assert [type(c) for c in changes] == [PriceChange, PriceChange]
    assert [(c.side, c.price, c.size) for c in changes] == [
        ("BUY", D("0.59"), D("703988.22")), ("SELL", D("0.41"), D("703988.22"))
    ]
    assert changes[0].timestamp_ms == 1790272269309
    [trade] = parse_market_frame(sample_text("ws-market-last-trade-price.json").encode())
    assert isinstance(trade, LastTradePrice) and trade.price == D("0.002")
    array = json.dumps([BOOK, sample("ws-market-last-trade-price.json"),
                        {"event_type": "best_bid_ask", "asset_id": ASSET}])
    assert [type(e) for e in parse_market_frame(array)] == [OrderBook, LastTradePrice]
    tick = parse_market_frame(json.dumps({
        "event_type": "tick_size_change", "asset_id": ASSET, "market": BOOK["market"],
        "old_tick_size": "0.01", "new_tick_size": "0.001", "timestamp": "100000000000",
    }))
    assert tick == [TickSizeChange(BOOK["market"], ASSET, D("0.01"), D("0.001"), 100000000000)]
    assert parse_market_frame("PONG") == [] and parse_market_frame("  ") == []
    with pytest.raises(MalformedResponse):
        parse_market_frame('{"event_type": "book", ')


class ScriptedChannel:
    """Connection 1: the sample book, changes once the client subscribes more, then silence
    (no PONG). Connection 2: the book again for everything the client watches."""

    def __init__(self) -> None:
        self.connections = 0
        self.received: list[list[Any]] = []

    async def handler(self, websocket: Any) -> None:
        self.connections += 1
        heard: list[Any] = []
        self.received.append(heard)
        heard.append(json.loads(await websocket.recv()))
        await websocket.send(json.dumps([BOOK]))
        if self.connections > 1:
            await websocket.wait_closed()
            return
        heard.append(json.loads(await websocket.recv()))  # the dynamic subscribe
        await websocket.send(json.dumps({
            "market": BOOK["market"], "timestamp": "1786604073000", "event_type": "price_change",
            "price_changes": [_change("0.07", "0", "BUY"), _change("0.065", "12", "BUY"),
                              _change("0.08", "5", "SELL"), _change("0.9", "13150.5", "SELL")],
        }))
        await websocket.send(json.dumps({
            "event_type": "tick_size_change", "asset_id": ASSET, "market": BOOK["market"],
            "old_tick_size": "0.01", "new_tick_size": "0.001", "timestamp": "1786604073001",
        }))
        last = dict(sample("ws-market-last-trade-price.json"))
        await websocket.send(json.dumps(last))  # another asset: ignored
        await websocket.send(json.dumps(dict(last, asset_id=ASSET, price="0.08")))
        try:
            while True:
                heard.append(await websocket.recv())  # PINGs, never answered
        except ConnectionClosed:
            pass


def test_feed_applies_changes_and_drops_books_of_a_silent_link() -> None:
    from websockets.trio.server import serve

    script = ScriptedChannel()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            server = await nursery.start(partial(serve, script.handler, 0, host="127.0.0.1"))
            port = server.listeners[0].socket.getsockname()[1]
            url = f"ws://127.0.0.1:{port}/ws/market"
            async with open_book_feed(url, [ASSET], ping_interval=0.3,
                                      backoff_initial=0.05) as feed:
                book = await feed.wait_synced(ASSET, 5)
                venue_book = parse_book(BOOK)
                assert book is not None and (book.bids, book.asks, book.tick_size) == (
                    venue_book.bids, venue_book.asks, D("0.01"))
                assert book.min_order_size is None and book.last_trade_price == D("0.920")
                feed.seed(OrderBook(  # a REST book of the same token: its market params
                    market=BOOK["market"], asset_id=ASSET, timestamp_ms=0, hash="", bids=(),
                    asks=(), min_order_size=D(5), tick_size=D("0.01"), neg_risk=False,
                    last_trade_price=None,
                ))
                seeded = feed.book(ASSET)
                assert seeded is not None and seeded.min_order_size == D(5)
                assert seeded.computed_hash() == BOOK["hash"]  # exactly the venue's book
                assert feed.book(ASSET) is seeded  # unchanged: the same object, no rebuild

                feed.watch([OTHER])
                with trio.fail_after(5):
                    while (changed := feed.book(ASSET)) is None or changed.tick_size != D(
                        "0.001") or changed.last_trade_price != D("0.08"):
                        await trio.sleep(0.01)
                assert [(lv.price, lv.size) for lv in changed.bids[-3:]] == [
                    (D("0.05"), D("507106.18")), (D("0.06"), D("219685.67")), (D("0.065"), D(12))
                ]
                assert changed.best_bid == D("0.065") and changed.best_ask == D("0.08")
                assert (changed.asks[-1].price, changed.asks[-1].size) == (D("0.08"), D(5))
                assert {lv.price: lv.size for lv in changed.asks}[D("0.9")] == D("13150.5")
                assert len(changed.asks) == len(BOOK["asks"])  # 0.08 and 0.9 were resized
                assert changed.hash == "ab" * 20 and changed.timestamp_ms == 1786604073000

                with trio.fail_after(5):  # no PONG: the link is presumed dead
                    while feed.connected:
                        await trio.sleep(0.01)
                assert feed.book(ASSET) is None
                assert await feed.wait_synced(ASSET, 5) is not None  # reconnected, resubscribed
                assert feed.connections == 2 and "PING" in (feed.last_error or "")
            await server.aclose()
            nursery.cancel_scope.cancel()

    trio.run(main)
    first, second = script.received
    assert first[0] == {"assets_ids": [ASSET], "type": "market"}
    assert first[1] == {"assets_ids": [OTHER], "operation": "subscribe"}
    assert first[2:] == ["PING"]  # one unanswered ping, then the client gave up
    assert second[0] == {"assets_ids": sorted([ASSET, OTHER]), "type": "market"}


def test_feed_keeps_retrying_while_the_channel_is_down() -> None:
    async def main() -> None:
        listener = trio.socket.socket()
        await listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        listener.close()
        async with open_book_feed(f"ws://127.0.0.1:{port}/ws/market", [ASSET],
                                  backoff_initial=0.01, backoff_max=0.05) as feed:
            assert await feed.wait_synced(ASSET, 0.3) is None
            assert not feed.connected and feed.connections == 0 and feed.last_error

    trio.run(main)


def test_market_channel_urls() -> None:
    assert VenueConfig.polymarket().market_ws_url == (
        "wss://ws-subscriptions-clob.polymarket.com/ws/market"
    )
    assert VenueConfig.for_sandbox("http://127.0.0.1:8010/").market_ws_url == (
        "ws://127.0.0.1:8010/ws/market"
    )
    settings = {
        "VENUE": "sandbox", "CHAIN_ID": 31337, "POLYMARKET_GAMMA_URL": "http://h:9/gamma",
        "POLYMARKET_CLOB_URL": "http://h:9/clob", "POLYMARKET_DATA_URL": "http://h:9/data",
        "SECRET_KEY": "s", "WALLET_ENCRYPTION_KEY": "w",
    }

    def venue_config(env: dict) -> VenueConfig:
        return services_venues.venue_config(config.load(env=env))

    assert venue_config(settings).market_ws_url == "ws://h:9/ws/market"
    secure = venue_config(dict(settings, POLYMARKET_CLOB_URL="https://venue.test/clob/"))
    assert secure.market_ws_url == "wss://venue.test/ws/market"
    live = venue_config(dict(settings, VENUE="polymarket", CHAIN_ID=137,
                             POLYMARKET_CLOB_URL="https://clob.polymarket.com"))
    assert live.market_ws_url == "wss://ws-subscriptions-clob.polymarket.com/ws/market"
    with pytest.raises(ValueError, match="market channel"):
        AsyncVenueClient(VenueConfig("http://g", "http://c", "http://d")).book_feed()
    with pytest.raises(Exception, match="URI"):
        BookFeed("http://not-a-websocket")
