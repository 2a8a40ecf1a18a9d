"""Market discovery against the sandbox venue over real HTTP."""

from __future__ import annotations

from decimal import Decimal

import pytest

from models import Market, MarketToken
from services.markets import markets
from services.platform.errors import NotFound, ValidationFailed
from venue.models import Level, OrderBook

BTC = "will-bitcoin-reach-150k-2026"


def test_search_finds_markets_and_fills_catalogue(bound_db):
    found = markets.search_markets("bitcoin", limit=50)
    assert BTC in [m["slug"] for m in found]
    btc = next(m for m in found if m["slug"] == BTC)
    assert btc["category"].lower() == "crypto" and btc["status"] == "open"
    assert [o["outcome"] for o in btc["outcomes"]] == ["Yes", "No"]
    assert all(isinstance(o["price"], Decimal) for o in btc["outcomes"])
    row = Market.get(Market.slug == BTC)
    assert MarketToken.select().where(MarketToken.market == row.id).count() == 2


def test_search_validation(bound_db):
    with pytest.raises(ValidationFailed):
        markets.search_markets("   ")
    with pytest.raises(ValidationFailed):
        markets.search_markets("x", limit=0)


def test_details_by_slug_and_token(bound_db):
    details = markets.market_details(slug=BTC)
    assert details["condition_id"].startswith("0x") and details["tick_size"] > 0
    token = details["outcomes"][0]["token_id"]
    assert markets.market_details(token_id=token)["slug"] == BTC
    with pytest.raises(NotFound):
        markets.market_details(slug="no-such-market-anywhere")


def test_depth_from_live_book(bound_db):
    token = markets.market_details(slug=BTC)["outcomes"][0]["token_id"]
    depth = markets.market_depth(token, levels=3)
    assert depth["best_bid"] < depth["best_ask"]
    assert depth["spread"] == depth["best_ask"] - depth["best_bid"]
    assert len(depth["bids"]) <= 3
    sizes = [lv["cumulative_size"] for lv in depth["bids"]]
    assert sizes == sorted(sizes)
    assert [b["within_cents"] for b in depth["liquidity"]] == [1, 2, 5]
    assert depth["liquidity"][0]["bid_usdc"] <= depth["liquidity"][2]["bid_usdc"]
    with pytest.raises(NotFound):
        markets.market_depth("12345")


def test_depth_math_is_exact():
    book = OrderBook(market="0x", asset_id="1", timestamp_ms=0, hash="",
                     bids=(Level(Decimal("0.48"), Decimal("100")),
                           Level(Decimal("0.50"), Decimal("10"))),
                     asks=(Level(Decimal("0.60"), Decimal("5")),
                           Level(Decimal("0.52"), Decimal("20"))),
                     min_order_size=Decimal("5"), tick_size=Decimal("0.01"), neg_risk=False,
                     last_trade_price=None)
    depth = markets.book_depth(book)
    assert depth["midpoint"] == Decimal("0.51") and depth["spread"] == Decimal("0.02")
    assert [lv["price"] for lv in depth["bids"]] == [Decimal("0.50"), Decimal("0.48")]
    assert depth["bids"][1]["cumulative_size"] == Decimal("110")
    one_cent, _, five = depth["liquidity"]
    assert one_cent["bid_usdc"] == Decimal("5.00") and one_cent["ask_usdc"] == Decimal("10.40")
    assert five["bid_usdc"] == Decimal("53.00") and five["ask_usdc"] == Decimal("10.40")


WHALE = "0x" + "ab" * 20


def test_price_history_summary(bound_db, venue_control):
    token = markets.market_details(slug=BTC)["outcomes"][0]["token_id"]
    for side, price in (("BUY", "0.61"), ("SELL", "0.58")):
        venue_control.call("POST", "/trades", {"wallet": WHALE, "token_id": token,
                                               "side": side, "price": price, "size": "10"},
                           expect=201)
    history = markets.price_history(token, "1w")
    prices = [p["price"] for p in history["points"]]
    assert prices, "trades should leave price points"
    assert history["high"] == max(prices) and history["low"] == min(prices)
    assert history["change"] == history["latest"] - history["open"]
    with pytest.raises(ValidationFailed):
        markets.price_history(token, "3y")


def test_top_traders(bound_db, venue_control):
    token = markets.market_details(slug=BTC)["outcomes"][0]["token_id"]
    # The sandbox is shared by every test of this xdist worker, and others trade in it too:
    # a volume beyond theirs puts the whale at the top whatever ran before. The venue client
    # keeps a leaderboard answer 60 s per query, so this asks one no other test asks.
    venue_control.call("POST", "/trades", {"wallet": WHALE, "token_id": token, "side": "BUY",
                                           "price": "0.6", "size": "10000000"}, expect=201)
    traders = markets.top_traders("month", "vol", 47)
    assert WHALE.lower() in [t["address"].lower() for t in traders]
    assert all(isinstance(t["volume"], Decimal) for t in traders)
    with pytest.raises(ValidationFailed):
        markets.top_traders("YEAR")


def test_engines_recording_one_new_market_at_once_all_succeed(bound_db):
    """Copy batches on several threads (or workers) meet a market new to the catalogue at
    once: each writes it, none fails (PostgreSQL's ON CONFLICT guards only the venue id, so
    a concurrent insert used to fail on the slug's unique index)."""
    import secrets
    import threading
    from types import SimpleNamespace

    from models.base import db
    from services.markets import catalogue

    failures: list[BaseException] = []
    for _ in range(25):
        slug = f"race-{secrets.token_hex(4)}"
        market = SimpleNamespace(
            id=secrets.randbelow(10**9), slug=slug, condition_id="0x" + secrets.token_hex(32),
            question=f"{slug}?", description="", tags=(), outcomes=["Yes", "No"],
            token_ids=[str(secrets.randbelow(10**30)) for _ in range(2)], active=True,
            closed=False, neg_risk=False)
        start = threading.Barrier(4)

        def write(m: SimpleNamespace = market, gate: threading.Barrier = start) -> None:
            with db.connection_context():
                gate.wait()
                try:
                    catalogue.upsert_markets([m])
                except BaseException as exc:  # collected: the assertion names it
                    failures.append(exc)

        threads = [threading.Thread(target=write) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert Market.select().where(Market.slug == slug).count() == 1
    assert failures == []
