"""CPU of reading an order book: GET /book versus the market channel's local book.

Client side (the Trio loop thread's CPU, ``time.thread_time``: the in-process sandbox's
threads are not counted), in µs per operation, medians over ``--runs`` runs of
``--rounds`` operations:

- rest: ``await client.clob.book(token)`` against the sandbox (request, answer, parse);
- feed read: ``BookFeed.book(token)`` on an unchanged book (what a fill costs);
- feed update: one ``price_change`` frame of one level applied (parse + apply) and the
  book read after it (the rebuild), for the sandbox's house book and for the 57-level
  ``ws-market-book.json`` sample.

Sandbox side (``time.process_time``), µs per book change of one market: the channel's
``publish`` with one connection watching both tokens (levels aggregated, diffed, hashed,
encoded), and with nobody watching (the cost every other market pays).

    .venv/bin/python bench/market_feed_cpu.py --runs 7 --rounds 2000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devstack.venue import SandboxServer
from devstack.venue.matching import BookOrder
from venue.client import AsyncVenueClient
from venue.config import VenueConfig
from venue.market_feed import BookFeed
from venue.parse.feeds import parse_market_frame

SAMPLE = Path(__file__).resolve().parent.parent / "tests/venue/samples/ws-market-book.json"


def per_op(samples: list[float], rounds: int) -> float:
    """Median µs per operation."""
    return statistics.median(samples) / rounds * 1e6


def change_frame(market: str, asset: str, price: str, size: str, side: str) -> str:
    """A one-level price_change frame."""
    return json.dumps({
        "market": market, "timestamp": "1", "event_type": "price_change",
        "price_changes": [{"asset_id": asset, "price": price, "size": size, "side": side,
                           "hash": "00" * 20, "best_bid": "0", "best_ask": "1"}],
    })


def time_updates(feed: BookFeed, frames: list[str], asset: str, rounds: int) -> float:
    """Thread CPU of applying `rounds` frames (cycling) and reading the book after each."""
    start = time.thread_time()
    for i in range(rounds):
        feed._apply(parse_market_frame(frames[i % len(frames)]))
        feed.book(asset)
    return time.thread_time() - start


async def client_side(venue: SandboxServer, token: str, args: argparse.Namespace) -> dict:
    """Client CPU samples, one list per measure."""
    results: dict[str, list[float]] = {"rest": [], "read": [], "update": [], "update57": []}
    config = VenueConfig.for_sandbox(venue.url)
    async with AsyncVenueClient(config) as client, client.book_feed([token]) as feed:
        book = await feed.wait_synced(token, 10)
        assert book is not None
        best = book.bids[-1]
        # The best bid resized and back (an even number of rounds leaves the book as it was).
        frames = [change_frame(book.market, token, str(best.price), size, "BUY")
                  for size in ("1", str(best.size))]
        sample = json.loads(SAMPLE.read_text())
        big = BookFeed("ws://127.0.0.1:1/ws/market", [sample["asset_id"]])
        big.connected = True  # applied by hand below: no connection needed
        big._apply(parse_market_frame(json.dumps(sample)))
        big_frames = [change_frame(sample["market"], sample["asset_id"], "0.07", size, "BUY")
                      for size in ("1", "182528.55")]
        for _ in range(args.runs):
            start = time.thread_time()
            for _ in range(args.rounds // 10):  # a round trip each: fewer of them
                await client.clob.book(token)
            results["rest"].append((time.thread_time() - start) * 10)
            start = time.thread_time()
            for _ in range(args.rounds):
                feed.book(token)
            results["read"].append(time.thread_time() - start)
            results["update"].append(time_updates(feed, frames, token, args.rounds))
            results["update57"].append(time_updates(big, big_frames, sample["asset_id"],
                                                    args.rounds))
    return results


def sandbox_side(venue: SandboxServer, token: str, args: argparse.Namespace) -> dict:
    """Sandbox CPU samples of one market's publish, watched and unwatched."""
    state = venue.state
    channel = state.market_channel
    market, index = state.catalog.tokens[token]
    book = state.desk.books[market.condition_id]
    order = BookOrder(order_id="bench", condition_id=market.condition_id, token_id=token,
                      token_index=index, side="BUY", price=Decimal("0.2"),
                      original_size=10_000_000, maker=state.house)
    results: dict[str, list[float]] = {"watched": [], "unwatched": []}

    def toggle(rounds: int) -> float:
        start = time.process_time()
        with state.lock:
            for i in range(rounds):
                if i % 2:
                    book.remove(order)
                else:
                    book.add(order)
                channel.on_book_changed(market)
        return time.process_time() - start

    sub = channel.connect()
    channel.subscribe(sub, market.token_ids)
    for _ in range(args.runs):
        results["watched"].append(toggle(args.rounds))
        while not sub.outbox.empty():
            sub.outbox.get()
    channel.disconnect(sub)
    for _ in range(args.runs):
        results["unwatched"].append(toggle(args.rounds))
    return results


def main() -> None:
    """Run both sides and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    with SandboxServer(seed=1) as venue:
        market = next(m for m in venue.state.catalog.markets.values() if m.house_liquidity)
        token = market.token_ids[0]
        client = trio.run(client_side, venue, token, args)
        sandbox = sandbox_side(venue, token, args)
    print(f"client (µs of loop-thread CPU per op, median of {args.runs} runs):")
    print(f"  GET /book (sandbox house book)          {per_op(client['rest'], args.rounds):8.1f}")
    print(f"  feed.book() read, unchanged            {per_op(client['read'], args.rounds):8.2f}")
    print(f"  one price_change applied + book() read  {per_op(client['update'], args.rounds):8.1f}")
    print(f"  the same on the 57-level sample book    "
          f"{per_op(client['update57'], args.rounds):8.1f}")
    print("sandbox (µs of process CPU per book change of one market):")
    print(f"  publish, both tokens watched            "
          f"{per_op(sandbox['watched'], args.rounds):8.1f}")
    print(f"  publish, nobody watching                "
          f"{per_op(sandbox['unwatched'], args.rounds):8.2f}")


if __name__ == "__main__":
    main()
