"""services/trading/positions.py: venue sizes, ledger basis, PnL from the live book, resolution,
sells."""

from __future__ import annotations

from decimal import Decimal

import pytest

from services.platform import errors
from services.trading import orders, positions, previews


def _buy(trader, token, size, kind="market", price=None):
    quote = previews.create(trader.user, token, "buy", size, kind, price)
    return orders.place_order(trader.user, token_id=token, side="buy", size=size,
                              order_type=kind, price=price, preview_id=quote["preview_id"])


def test_positions_after_fills_agree_with_the_venue(trader, market, venue_control):
    assert positions.list_positions(trader.user) == []
    _buy(trader, market.yes, "10")
    _buy(trader, market.no, "20")

    rows = {p["token_id"]: p for p in positions.list_positions(trader.user)}
    yes, no = rows[market.yes], rows[market.no]
    assert (yes["size"], yes["cost_basis"], yes["current_price"]) == (
        Decimal(10), Decimal("5.1"), Decimal("0.50"))
    assert yes["current_value"] == Decimal("5")
    assert yes["unrealized_pnl"] == Decimal("-0.1")
    assert (yes["market_slug"], yes["outcome"], yes["resolved"], yes["claimable_value"]) == (
        market.slug, "Yes", False, None)
    assert yes["market_title"] == f"Will {market.slug} happen?"
    assert (no["size"], no["cost_basis"], no["outcome"]) == (Decimal(20), Decimal("10.2"), "No")
    # both outcomes held: the venue calls them MERGEABLE, and 10 complete sets merge to 10 pUSD
    assert [(p["status"], p["merge_value"]) for p in (yes, no)] == [
        ("MERGEABLE", Decimal(10)), ("MERGEABLE", Decimal(10))]
    venue_sizes = venue_control.balances(trader.maker)["positions"]
    assert venue_sizes == {market.yes: "10", market.no: "20"}
    assert positions.ledger_drift(trader.user) == {}


def test_realized_pnl_and_inactive_positions(trader, market):
    _buy(trader, market.yes, "10")
    sold = positions.sell_positions(trader.user, [market.yes])
    assert [(r["status"], r["filled_size"], r["average_price"]) for r in sold] == [
        ("matched", Decimal(10), Decimal("0.49"))]
    assert positions.list_positions(trader.user) == []
    [row] = positions.list_positions(trader.user, active_only=False)
    assert (row["token_id"], row["size"], row["cost_basis"]) == (market.yes, 0, 0)
    assert row["realized_pnl"] == Decimal("-0.2")  # bought at 0.51, sold at 0.49
    assert positions.ledger(trader.user)[market.yes].realized_pnl == Decimal("-0.2")


def test_positions_after_resolution_are_claimable(trader, market, venue_control,
                                                  fresh_venue_cache):
    _buy(trader, market.yes, "10")
    _buy(trader, market.no, "5")
    venue_control.call("POST", f"/markets/{market.condition_id}/resolve", {"winner": "Yes"},
                       expect=200)
    rows = {p["token_id"]: p for p in positions.list_positions(trader.user)}
    won, lost = rows[market.yes], rows[market.no]
    assert (won["resolved"], won["current_price"], won["current_value"]) == (
        True, Decimal(1), Decimal(10))
    assert won["claimable_value"] == Decimal(10)
    assert won["unrealized_pnl"] == Decimal("4.9")
    assert (lost["resolved"], lost["current_price"], lost["claimable_value"]) == (
        True, Decimal(0), Decimal(0))
    assert (won["status"], lost["status"]) == ("REDEEMABLE", "REDEEMABLE_LOST")
    assert lost["unrealized_pnl"] == Decimal("-2.55")


def test_sell_positions_reports_each_token(trader, market):
    _buy(trader, market.yes, "10")
    results = positions.sell_positions(trader.user, [market.yes, market.no])
    assert [(r["token_id"], r["status"]) for r in results] == [
        (market.yes, "matched"), (market.no, "rejected")]
    assert results[1]["reason"] == "No position in this token."
    with pytest.raises(errors.ValidationFailed):
        positions.sell_positions(trader.user, [])
