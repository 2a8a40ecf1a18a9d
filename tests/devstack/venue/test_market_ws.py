"""The sandbox's CLOB market channel (/ws/market) over a real websocket: books, changes, trades.

A replica applies what the channel sends to the subscription's books, checks every change's
hash with the client's own hashing (venue.models.OrderBook.computed_hash, verified on the
real samples), and must end with exactly GET /book's levels.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal
from typing import Any

import pytest
from py_clob_client_v2.clob_types import MarketOrderArgsV2, OrderArgsV2, OrderPayload, OrderType
from websockets.sync.client import ClientConnection, connect

from tests.devstack.venue.test_sample_shapes import assert_shape, sample
from venue.models import Level, OrderBook

D = Decimal


def _limit(token: str, price: str, size: str, side: str = "BUY", **extra: Any) -> OrderArgsV2:
    return OrderArgsV2(token_id=token, price=D(price), size=D(size), side=side, **extra)


class Channel:
    """A raw market-channel client that replays what it receives onto local books."""

    def __init__(self, url: str, control) -> None:
        self.ws: ClientConnection = connect(url)
        self.control = control
        self.books: dict[str, dict[str, Any]] = {}  # asset -> {"bids", "asks", "last", ...}

    def send(self, message: dict | str) -> None:
        """Send a JSON message (or plain text)."""
        self.ws.send(message if isinstance(message, str) else json.dumps(message))

    def recv(self, timeout: float = 5) -> Any:
        """The next message, decoded (floats as Decimal), applied to the local books."""
        text = self.ws.recv(timeout=timeout)
        if text in ("PONG", "pong"):
            return text
        message = json.loads(text, parse_float=Decimal)
        for item in message if isinstance(message, list) else [message]:
            self._apply(item)
        return message

    def sync(self) -> None:
        """Receive until a PING is answered: everything sent before it has been applied."""
        self.send("PING")
        while self.recv() != "PONG":
            pass

    def quiet(self) -> list:
        """Messages that arrive before the PONG of a PING sent now."""
        self.send("PING")
        seen = []
        while (message := self.recv()) != "PONG":
            seen.append(message)
        return seen

    def _apply(self, item: dict) -> None:
        kind = item["event_type"]
        if kind == "book":
            meta = self.control.get("/clob/book", token_id=item["asset_id"])
            self.books[item["asset_id"]] = {
                "market": item["market"],
                "bids": {lv["price"]: lv["size"] for lv in item["bids"]},
                "asks": {lv["price"]: lv["size"] for lv in item["asks"]},
                "tick": item["tick_size"],
                "last": item["last_trade_price"],
                "min": meta["min_order_size"],
                "neg": meta["neg_risk"],
            }
            assert self._hash(item["asset_id"], item["timestamp"]) == item["hash"]
        elif kind == "price_change":
            for change in item["price_changes"]:
                book = self.books[change["asset_id"]]
                side = book["bids"] if change["side"] == "BUY" else book["asks"]
                if change["size"] == "0":
                    side.pop(change["price"])
                else:
                    side[change["price"]] = change["size"]
                # Each change carries the hash and best prices of the book after it.
                assert self._hash(change["asset_id"], item["timestamp"]) == change["hash"]
                best_bid = max(map(D, book["bids"]), default=D(0))
                best_ask = min(map(D, book["asks"]), default=D(1))
                assert (D(change["best_bid"]), D(change["best_ask"])) == (best_bid, best_ask)
        elif kind == "last_trade_price":
            self.books[item["asset_id"]]["last"] = item["price"]

    def _hash(self, asset: str, timestamp: str) -> str:
        book = self.books[asset]

        def levels(side: dict[str, str], best_high: bool) -> tuple[Level, ...]:
            prices = sorted(side, key=D, reverse=not best_high)  # worst first
            return tuple(Level(D(p), D(side[p])) for p in prices)

        return OrderBook(
            market=book["market"], asset_id=asset, timestamp_ms=int(timestamp), hash="",
            bids=levels(book["bids"], True), asks=levels(book["asks"], False),
            min_order_size=D(book["min"]), tick_size=D(book["tick"]), neg_risk=book["neg"],
            last_trade_price=D(book["last"]) if book["last"] else None,
        ).computed_hash()

    def assert_matches_rest(self, asset: str) -> None:
        """The replayed book has exactly GET /book's levels (same text, same order)."""
        rest = self.control.get("/clob/book", token_id=asset)
        book = self.books[asset]
        assert [(lv["price"], lv["size"]) for lv in rest["bids"]] == sorted(
            book["bids"].items(), key=lambda item: D(item[0]))
        assert [(lv["price"], lv["size"]) for lv in rest["asks"]] == sorted(
            book["asks"].items(), key=lambda item: D(item[0]), reverse=True)
        assert rest["last_trade_price"] == book["last"]

    def close(self) -> None:
        """Close the socket."""
        self.ws.close()


@pytest.fixture
def channel(sandbox_venue, control):
    """A raw connection to the venue's market channel."""
    opened = Channel(sandbox_venue.market_ws_url, control)
    try:
        yield opened
    finally:
        opened.close()


def test_subscribe_answers_books_shaped_like_the_venue(sandbox_venue, control, channel):
    market = control.add_market("ws-books", fair_price="0.42", liquidity=True, neg_risk=True)
    yes, no = market["token_ids"]
    channel.send({"assets_ids": [yes, "123", no], "type": "market"})
    books = channel.recv()
    assert isinstance(books, list) and [b["asset_id"] for b in books] == [yes, no]  # 123: unknown
    real = sample("ws-market-book.json")
    for book in books:
        assert list(book) == list(real)  # same keys, same order, no min size / neg risk
        assert_shape(book, real)
        assert book["event_type"] == "book"
        rest = control.get("/clob/book", token_id=book["asset_id"])
        assert (book["bids"], book["asks"]) == (rest["bids"], rest["asks"])
        assert book["tick_size"] == rest["tick_size"] == "0.01"
        assert book["bids"] and book["asks"]  # the house quotes both sides
        channel.assert_matches_rest(book["asset_id"])  # and the hash was checked on receipt
    assert books[0]["bids"][-1]["price"] == "0.41"  # best last
    channel.send("PING")
    assert channel.recv() == "PONG"
    channel.send("ping")
    assert channel.recv() == "pong"


def test_changes_replay_to_get_book_through_rests_cancels_and_matches(
    sandbox_venue, control, make_trader, channel
):
    market = control.add_market("ws-changes")
    yes, no = market["token_ids"]
    maker, seller = make_trader("100"), make_trader("0")
    control.grant(seller.address, yes, "20")
    channel.send({"assets_ids": [yes, no], "type": "market"})
    assert [b["bids"] for b in channel.recv()] == [[], []]  # an empty market

    first = maker.client.create_and_post_order(_limit(yes, "0.40", "10"))
    change = channel.recv()
    assert list(change) == list(sample("ws-market-price-change.json"))
    assert_shape(change, sample("ws-market-price-change.json"))
    assert change["market"] == market["condition_id"]
    # One message, both tokens of the market: a Yes bid is a No ask at the complement.
    assert [(c["asset_id"], c["side"], c["price"], c["size"], c["best_bid"], c["best_ask"])
            for c in change["price_changes"]] == [
        (yes, "BUY", "0.4", "10", "0.4", "1"),
        (no, "SELL", "0.6", "10", "0", "0.6"),
    ]
    maker.client.create_and_post_order(_limit(yes, "0.40", "5"))
    sizes = [c["size"] for c in channel.recv()["price_changes"]]
    assert sizes == ["15", "15"]  # the level's new total, not the added 5
    maker.client.create_and_post_order(_limit(no, "0.55", "6"))  # a No bid: a Yes ask at 0.45
    assert [(c["side"], c["price"]) for c in channel.recv()["price_changes"]] == [
        ("SELL", "0.45"), ("BUY", "0.55")
    ]
    maker.client.cancel_order(OrderPayload(orderID=first["orderID"]))
    assert [c["size"] for c in channel.recv()["price_changes"]] == ["5", "5"]

    answer = seller.client.create_and_post_order(_limit(yes, "0.40", "5", "SELL"))
    assert answer["status"] == "matched"
    removed = channel.recv()
    assert [(c["price"], c["size"]) for c in removed["price_changes"]] == [
        ("0.4", "0"), ("0.6", "0")
    ]
    trades = [channel.recv(), channel.recv()]  # after the book change, one per token
    real_trade = sample("ws-market-last-trade-price.json")
    for trade in trades:
        assert list(trade) == list(real_trade)
        assert_shape(trade, real_trade)
    assert [(t["asset_id"], t["side"], t["price"], t["size"]) for t in trades] == [
        (yes, "SELL", "0.4", "5"), (no, "BUY", "0.6", "5"),
    ]
    assert trades[0]["transaction_hash"] == answer["transactionsHashes"][0]
    channel.sync()
    for token in (yes, no):
        channel.assert_matches_rest(token)
    assert channel.books[yes]["last"] == "0.4"


def test_matches_against_house_liquidity_replay_exactly(
    sandbox_venue, control, make_trader, channel
):
    market = control.add_market("ws-house", fair_price="0.5", liquidity=True)
    yes, no = market["token_ids"]
    taker = make_trader("5000")
    channel.send({"assets_ids": [yes], "type": "market"})
    channel.recv()
    # Sweeps three ask levels; the house then tops its ladder up again.
    taker.client.create_and_post_order(_limit(yes, "0.53", "1000"))
    taker.client.create_and_post_order(_limit(no, "0.53", "300"))  # mints against Yes bids
    taker.client.create_and_post_market_order(  # sells into the Yes bids, the rest killed
        MarketOrderArgsV2(token_id=yes, amount=D("800"), side="SELL", price=D("0.45")),
        order_type=OrderType.FAK,
    )
    messages = channel.quiet()
    assert messages and all(m["event_type"] in ("price_change", "last_trade_price")
                            for m in messages)
    # Only the subscribed token's entries are sent.
    assert {c["asset_id"] for m in messages if m["event_type"] == "price_change"
            for c in m["price_changes"]} == {yes}
    trades = [m for m in messages if m["event_type"] == "last_trade_price"]
    assert [(t["asset_id"], t["side"]) for t in trades] == [
        (yes, "BUY"), (yes, "SELL"), (yes, "SELL")
    ]
    channel.assert_matches_rest(yes)


def test_dynamic_subscribe_and_unsubscribe(sandbox_venue, control, make_trader, channel):
    one = control.add_market("ws-one")
    two = control.add_market("ws-two")
    trader = make_trader("100")
    channel.send({"assets_ids": [one["token_ids"][0]], "type": "market"})
    channel.recv()
    channel.send({"assets_ids": [two["token_ids"][1]], "operation": "subscribe"})
    added = channel.recv()
    assert [b["asset_id"] for b in added] == [two["token_ids"][1]]
    trader.client.create_and_post_order(_limit(two["token_ids"][0], "0.30", "10"))
    change = channel.recv()
    assert [(c["asset_id"], c["price"]) for c in change["price_changes"]] == [
        (two["token_ids"][1], "0.7")
    ]
    channel.send({"assets_ids": [one["token_ids"][0]], "operation": "unsubscribe"})
    # An unsubscribe has no answer; a subscribe sent after it does, and one socket's
    # messages are taken in order: once its book is here, the unsubscribe has been taken
    # (a loaded run posted the order before the server read the unsubscribe).
    channel.send({"assets_ids": [two["token_ids"][0]], "operation": "subscribe"})
    assert [b["asset_id"] for b in channel.recv()] == [two["token_ids"][0]]
    trader.client.create_and_post_order(_limit(one["token_ids"][0], "0.20", "10"))
    assert channel.quiet() == []  # nothing for the unsubscribed token
    assert not sandbox_venue.state.market_channel.watched(one["condition_id"])
    assert sandbox_venue.state.market_channel.watched(two["condition_id"])
    channel.assert_matches_rest(two["token_ids"][1])


def test_injected_trade_reports_its_price_and_leaves_the_book(sandbox_venue, control, channel):
    market = control.add_market("ws-inject", fair_price="0.5", liquidity=True)
    yes = market["token_ids"][0]
    channel.send({"assets_ids": [yes], "type": "market"})
    channel.recv()
    control.call("POST", "/trades", {
        "wallet": "0x1111111111111111111111111111111111111111", "token_id": yes,
        "side": "BUY", "price": "0.52", "size": "40",
    }, expect=201)
    messages = channel.quiet()
    assert [(m["event_type"], m["price"], m["side"], m["size"]) for m in messages] == [
        ("last_trade_price", "0.52", "BUY", "40")
    ]
    channel.assert_matches_rest(yes)


def test_resolution_reset_and_disconnect(sandbox_venue, control, channel):
    market = control.add_market("ws-resolve", fair_price="0.5", liquidity=True)
    seeded = control.market(index=0)
    channel.send({"assets_ids": [market["token_ids"][0], seeded["token_ids"][0]],
                  "type": "market"})
    channel.recv()
    control.call("POST", f"/markets/{market['condition_id']}/resolve", {"winner": 0}, expect=200)
    channel.sync()
    assert channel.books[market["token_ids"][0]]["bids"] == {}  # every order was cancelled
    channel.assert_matches_rest(market["token_ids"][0])

    control.call("POST", "/reset", expect=200)  # the added market is gone, the seeded one stays
    fresh = channel.recv()
    assert [b["asset_id"] for b in fresh] == [seeded["token_ids"][0]]
    channel.assert_matches_rest(seeded["token_ids"][0])
    hub = sandbox_venue.state.market_channel
    assert hub.watched(seeded["condition_id"])
    channel.close()
    deadline = time.monotonic() + 5
    while hub.watched(seeded["condition_id"]) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not hub.watched(seeded["condition_id"])  # no watcher, no cost


def test_expired_gtd_order_leaves_the_pushed_book(sandbox_venue, control, make_trader, channel):
    market = control.add_market("ws-gtd")
    yes = market["token_ids"][0]
    trader = make_trader("100")
    channel.send({"assets_ids": [yes], "type": "market"})
    channel.recv()
    soon = int(time.time()) + 2
    trader.client.create_and_post_order(
        _limit(yes, "0.2", "5", expiration=soon), order_type=OrderType.GTD
    )
    assert [c["size"] for c in channel.recv()["price_changes"]] == ["5"]
    sandbox_venue.state.clock = lambda: time.time() + 5  # past the expiration
    gone = channel.recv(timeout=3)  # pushed by the venue, no request needed
    assert [(c["price"], c["size"]) for c in gone["price_changes"]] == [("0.2", "0")]
    channel.assert_matches_rest(yes)
