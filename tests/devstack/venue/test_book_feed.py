"""BookFeed (venue.market_feed) through the sandbox's real market channel: local books equal
GET /book after rests, cancels and matches; dynamic watch; unknown once the venue is gone."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import trio
from py_clob_client_v2.clob_types import OrderArgsV2, OrderPayload

from devstack.venue import SandboxServer
from venue.client import AsyncVenueClient
from venue.config import VenueConfig
from venue.market_feed import BookFeed
from venue.models import OrderBook

D = Decimal


def _limit(token: str, price: str, size: str, side: str = "BUY") -> OrderArgsV2:
    return OrderArgsV2(token_id=token, price=D(price), size=D(size), side=side)


def _same(local: OrderBook | None, rest: OrderBook, seeded: bool) -> bool:
    """Same levels and market data; min size and neg risk too when the feed was seeded."""
    if local is None:
        return False
    fields = ["bids", "asks", "tick_size", "last_trade_price", "market", "asset_id"]
    if seeded:
        fields += ["min_order_size", "neg_risk"]
    return all(getattr(local, name) == getattr(rest, name) for name in fields)


async def _in_sync(
    feed: BookFeed, client: AsyncVenueClient, token: str, *, seeded: bool = False
) -> OrderBook:
    """Wait (5 s at most) until the feed's book equals GET /book; returns the local book."""
    rest = await client.clob.book(token)
    with trio.move_on_after(5):
        while not _same(feed.book(token), rest, seeded):
            await trio.sleep(0.01)
    local = feed.book(token)
    assert local is not None and _same(local, rest, seeded), (local, rest)
    return local


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    """A blocking official-client call, off the event loop so the feed keeps reading."""
    return await trio.to_thread.run_sync(fn, *args)


def test_local_book_follows_rests_cancels_and_matches(sandbox_venue, control, make_trader):
    market = control.add_market("feed-book", fair_price="0.5", liquidity=True, neg_risk=True)
    yes, no = market["token_ids"]
    maker, taker = make_trader("1000"), make_trader("1000")
    config = VenueConfig.for_sandbox(sandbox_venue.url)

    async def main() -> None:
        async with AsyncVenueClient(config) as client, client.book_feed([yes]) as feed:
            first = await feed.wait_synced(yes, 5)
            assert first is not None and first.min_order_size is None  # not on the WS book
            feed.seed(await client.clob.book(yes))  # min size and neg risk from REST
            book = await _in_sync(feed, client, yes, seeded=True)
            assert book.neg_risk is True and book.min_order_size == D(5)
            assert book.bids[-1].price == book.best_bid == D("0.49")  # worst first, best last
            assert book.asks[-1].price == book.best_ask == D("0.51")

            rested = await _call(maker.client.create_and_post_order, _limit(yes, "0.49", "7"))
            book = await _in_sync(feed, client, yes, seeded=True)
            assert book.bids[-1].size == D(257)  # joined the house's 250 at the best bid
            await _call(maker.client.create_and_post_order, _limit(no, "0.46", "9"))  # Yes ask
            book = await _in_sync(feed, client, yes, seeded=True)
            assert D("0.54") in {level.price for level in book.asks}
            await _call(maker.client.cancel_order, OrderPayload(orderID=rested["orderID"]))
            book = await _in_sync(feed, client, yes, seeded=True)
            assert book.bids[-1].size == D(250)

            await _call(taker.client.create_and_post_order, _limit(yes, "0.53", "600"))
            book = await _in_sync(feed, client, yes, seeded=True)
            assert book.last_trade_price == D("0.52")  # 250 at 0.51, 350 at 0.52
            await _call(taker.client.create_and_post_order, _limit(yes, "0.47", "400", "SELL"))
            book = await _in_sync(feed, client, yes, seeded=True)
            assert book.last_trade_price == D("0.48")  # 250 at 0.49, 150 at 0.48
            assert feed.connections == 1 and feed.messages >= 6

    trio.run(main)


def test_watch_more_tokens_and_unwatch(sandbox_venue, control, make_trader):
    one = control.add_market("feed-one", fair_price="0.3", liquidity=True)
    two = control.add_market("feed-two", fair_price="0.7", liquidity=True)
    trader = make_trader("1000")
    config = VenueConfig.for_sandbox(sandbox_venue.url)

    async def main() -> None:
        async with AsyncVenueClient(config) as client, client.book_feed() as feed:
            await feed.wait_connected()
            assert feed.book(one["token_ids"][0]) is None  # not watched
            feed.watch([one["token_ids"][0]])
            assert await feed.wait_synced(one["token_ids"][0], 5) is not None
            feed.watch([two["token_ids"][1], one["token_ids"][0]])  # on the open connection
            assert await feed.wait_synced(two["token_ids"][1], 5) is not None
            assert feed.tokens == {one["token_ids"][0], two["token_ids"][1]}
            await _call(trader.client.create_and_post_order,
                        _limit(two["token_ids"][0], "0.69", "11"))
            book = await _in_sync(feed, client, two["token_ids"][1])
            assert book.asks[-1].size == D(261)  # a Yes bid at 0.69 is a No ask at 0.31
            feed.unwatch([one["token_ids"][0]])
            assert feed.book(one["token_ids"][0]) is None
            await trio.sleep(0.2)  # the unsubscribe is sent at once, no waiting for a frame
            assert not sandbox_venue.state.market_channel.watched(one["condition_id"])
            feed.watch([one["token_ids"][0]])  # and back: a fresh snapshot
            assert await feed.wait_synced(one["token_ids"][0], 5) is not None
            await _in_sync(feed, client, one["token_ids"][0])
            assert feed.connections == 1

    trio.run(main)


def test_book_is_unknown_once_the_venue_is_gone_until_it_is_back():
    venue = SandboxServer(seed=3).start()
    port = venue.port
    token = next(iter(venue.state.catalog.markets.values())).token_ids[0]
    config = VenueConfig.for_sandbox(venue.url)

    async def main() -> None:
        nonlocal venue
        async with AsyncVenueClient(config) as client, client.book_feed(
            [token], backoff_initial=0.05, backoff_max=0.2
        ) as feed:
            await _in_sync(feed, client, token)
            await trio.to_thread.run_sync(venue.stop)
            with trio.fail_after(5):
                while feed.connected:
                    await trio.sleep(0.01)
            assert feed.book(token) is None
            assert await feed.wait_synced(token, 0.3) is None  # retrying, nobody answers
            assert feed.last_error is not None

            venue = SandboxServer(port=port, seed=3).start()  # same catalog, fresh books
            assert await feed.wait_synced(token, 10) is not None
            await _in_sync(feed, client, token)
            assert feed.connections == 2

    try:
        trio.run(main)
    finally:
        venue.stop()
