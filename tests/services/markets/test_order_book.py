"""Book walking and what an OrderBook keeps once computed: same answers as computed afresh."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random
import re
from decimal import Decimal

import pytest

from services.markets import order_book
from services.trading import order_plan
from services.trading.order_plan import MarketInfo
from venue.models import FeeSchedule, Level, OrderBook

D = Decimal


def make_book(bids: list[tuple[str, str]], asks: list[tuple[str, str]]) -> OrderBook:
    """A book with the levels in the order given (the venue sends worst first)."""
    return OrderBook(market="0x" + "ab" * 32, asset_id="1", timestamp_ms=0, hash="",
                     bids=tuple(Level(D(p), D(s)) for p, s in bids),
                     asks=tuple(Level(D(p), D(s)) for p, s in asks),
                     min_order_size=D(5), tick_size=D("0.01"), neg_risk=False,
                     last_trade_price=None)


def random_book(rng: random.Random) -> OrderBook:
    """Unsorted sides with repeated prices (0.5 and 0.50 too) and empty or negative sizes."""
    def level() -> tuple[str, str]:
        price = rng.choice(["0.5", "0.50", str(D(rng.randint(1, 99)) / 100)])
        return price, rng.choice(["0", "-1", "1", "2.5", "10", "100"])
    return make_book([level() for _ in range(rng.randint(0, 7))],
                     [level() for _ in range(rng.randint(0, 7))])


def test_kept_best_prices_and_sorted_levels_equal_the_uncached_ones_for_unsorted_input() -> None:
    rng = random.Random(20)
    for _ in range(300):
        book = random_book(rng)
        for _ in range(2):  # first use computes, the second reads what the book kept
            assert book.best_bid == max((lv.price for lv in book.bids), default=None)
            assert book.best_ask == min((lv.price for lv in book.asks), default=None)
            bid, ask = book.best_bid, book.best_ask
            assert book.midpoint == (None if bid is None or ask is None else (bid + ask) / 2)
            assert book.top_of_book() == (book.best_bid, book.best_ask, book.midpoint)
            # Stable sorts: levels at an equal price keep the venue's order (same objects).
            asks = sorted(book.asks, key=lambda lv: lv.price)
            bids = sorted(book.bids, key=lambda lv: lv.price, reverse=True)
            assert [id(lv) for lv in book.asks_best_first()] == [id(lv) for lv in asks]
            assert [id(lv) for lv in book.bids_best_first()] == [id(lv) for lv in bids]
            assert order_book.levels_best_first(book, "buy") == asks
            assert order_book.levels_best_first(book, "sell") == bids


def test_levels_best_first_is_a_fresh_list_each_time() -> None:
    book = make_book([("0.40", "1"), ("0.45", "2")], [("0.60", "3"), ("0.55", "4")])
    levels = order_book.levels_best_first(book, "buy")
    levels.clear()
    assert [lv.price for lv in order_book.levels_best_first(book, "buy")] == [D("0.55"),
                                                                             D("0.60")]


def test_a_book_compares_copies_and_pickles_by_its_fields_only() -> None:
    book = make_book([("0.48", "100"), ("0.50", "10")], [("0.60", "5"), ("0.52", "20")])
    fresh = make_book([("0.48", "100"), ("0.50", "10")], [("0.60", "5"), ("0.52", "20")])
    assert book.midpoint == D("0.51") and book.asks_best_first()[0].price == D("0.52")
    assert book == fresh and hash(book) == hash(fresh) and repr(book) == repr(fresh)
    assert dataclasses.asdict(book) == dataclasses.asdict(fresh)
    for other in (pickle.loads(pickle.dumps(book)), copy.copy(book), copy.deepcopy(book)):
        assert other == book
        assert other.top_of_book() == (D("0.50"), D("0.52"), D("0.51"))
        assert [lv.price for lv in other.bids_best_first()] == [D("0.50"), D("0.48")]
    # A changed copy derives its own values, not the original's.
    emptier = dataclasses.replace(book, asks=())
    assert emptier.best_ask is None and emptier.midpoint is None
    assert emptier.best_bid == D("0.50")
    with pytest.raises(dataclasses.FrozenInstanceError):
        book.bids = ()  # type: ignore[misc]


def test_walk_over_unsorted_levels() -> None:
    # Worst first on both sides, an empty level and two levels at one price.
    book = make_book([("0.40", "10"), ("0.45", "0"), ("0.44", "5"), ("0.45", "3")],
                     [("0.60", "10"), ("0.55", "4"), ("0.55", "2"), ("0.52", "0")])
    buy = order_book.walk(book, "buy", shares=D("8"))
    assert [(f.price, f.shares) for f in buy.fills] == [(D("0.55"), D("4")), (D("0.55"), D("2")),
                                                        (D("0.60"), D("2"))]
    assert buy.complete and buy.value == D("4.50") and buy.worst_price == D("0.60")
    capped = order_book.walk(book, "buy", shares=D("8"), limit=D("0.55"))
    assert capped.shares == D("6") and not capped.complete
    spend = order_book.walk(book, "buy", budget=D("3.4"))
    assert [(f.price, f.shares) for f in spend.fills] == [(D("0.55"), D("4")),
                                                          (D("0.55"), D("2")),
                                                          (D("0.60"), D("0.166666"))]
    assert spend.complete
    sell = order_book.walk(book, "sell", shares=D("20"))
    assert [(f.price, f.shares) for f in sell.fills] == [(D("0.45"), D("3")), (D("0.44"), D("5")),
                                                         (D("0.40"), D("10"))]
    assert not sell.complete and sell.value == D("7.55")
    with pytest.raises(ValueError, match="shares or budget"):
        order_book.walk(book, "buy")


def test_walks_and_plans_on_a_reused_book_equal_those_on_a_fresh_one() -> None:
    """The copy engine plans every follower's order on one book: the kept values change
    nothing, and plan_normalized plans what plan_order plans."""
    rng = random.Random(5)
    schedule = FeeSchedule(rate=D("0.02"), exponent=D(1), taker_only=True, rebate_rate=D(0))
    market = MarketInfo(token_id="1", market_slug="m", market_title="M?", outcome="Yes",
                        condition_id="0x", tick_size=D("0.01"), min_order_size=D(1),
                        neg_risk=False, fee_schedule=schedule, accepting_orders=True,
                        closed=False)
    planned = 0
    for _ in range(200):
        book = random_book(rng)
        for _ in range(3):
            side = rng.choice(["buy", "sell"])
            size = D(rng.randint(1, 2000)) / 100
            fresh = dataclasses.replace(book)
            limit = rng.choice([None, D(rng.randint(1, 99)) / 100])
            assert order_book.walk(book, side, shares=size, limit=limit) == order_book.walk(
                fresh, side, shares=size, limit=limit)
            if side == "buy":
                budget = D(rng.randint(1, 5000)) / 100
                assert order_book.walk(book, side, budget=budget, limit=limit) == (
                    order_book.walk(fresh, side, budget=budget, limit=limit))
            try:
                expected = order_plan.plan_order("1", side, str(size), "market",
                                                 time_in_force="FAK", book=fresh, market=market)
            except Exception as exc:  # the same refusal either way
                with pytest.raises(type(exc), match=re.escape(str(exc))):
                    order_plan.plan_normalized("1", side, size, "market", time_in_force="FAK",
                                               book=book, market=market)
                continue
            plan = order_plan.plan_normalized("1", side, size, "market", time_in_force="FAK",
                                              book=book, market=market)
            assert plan.summary() == expected.summary()
            assert plan.walk == expected.walk and plan.max_collateral == expected.max_collateral
            planned += 1
    assert planned > 100
