"""A copy config's PnL curve marks open shares at the venue's price history between fills,
so an unrealized loss shows when the price falls, not only at the last point; a config
with no fill has no curve (the page says so in words)."""

from __future__ import annotations

import json
import secrets
from datetime import timedelta
from decimal import Decimal

from models import User
from models.base import utcnow
from models.copying import CopyConfig, CopyIntent
from models.trading import Trade
from services.copying import pnl_history


def _config(user: User) -> CopyConfig:
    return CopyConfig.create(user=user.id, target_address="0x" + secrets.token_hex(20),
                             size_multiplier=Decimal(1), max_position_usdc=Decimal(100),
                             price_deviation_bps=500, paper_trading=True, is_active=False,
                             blocked_categories=json.dumps([]))


def test_no_fill_no_curve(bound_db, user):
    assert pnl_history.config_series(user, _config(user).id) == []


def test_unrealized_pnl_moves_with_the_price_between_fills(bound_db, user, venue_control):
    slug = f"pnl-curve-{secrets.token_hex(4)}"
    market = venue_control.add_market(slug, liquidity=True, fair_price="0.5")
    yes = market["token_ids"][0]
    config = _config(user)
    bought = utcnow() - timedelta(minutes=5)
    CopyIntent.create(config=config.id, user_id=user.id, target_trade_key=secrets.token_hex(8),
                      target_address=config.target_address, token_id=yes, market_slug=slug,
                      paper=True, status="filled", side="BUY", size=Decimal(10),
                      price=Decimal("0.5"), filled_size=Decimal(10),
                      filled_price=Decimal("0.5"), seen_at=bought, settled_at=bought,
                      created_at=bought)
    # Someone trades the token down to 0.30 after our fill: the venue's price history moves.
    venue_control.call("POST", "/trades", {"token_id": yes, "wallet": "0x" + "7" * 40,
                                           "side": "SELL", "price": "0.30", "size": "20"},
                       expect=201)

    series = pnl_history.config_series(user, config.id)
    assert series[0]["total_pnl"] == 0  # marked at the fill itself
    between = series[1:-1]  # the price points after the fill, before "now" at the book
    assert any(p["unrealized_pnl"] == Decimal(10) * Decimal("0.30") - Decimal(5)
               for p in between), [(p["at"], p["unrealized_pnl"]) for p in series]
    assert [p["at"] for p in series] == sorted(p["at"] for p in series)


def _fill(user: User, token: str, side: str, size: str, price: str, fee: str, at) -> Trade:
    value = Decimal(size) * Decimal(price)
    return Trade.create(user=user.id, token_id=token, side=side, requested_size=Decimal(size),
                        price=Decimal(price), filled_size=Decimal(size), filled_value=value,
                        fee=Decimal(fee), status="filled", created_at=at, filled_at=at)


def account_fills(user: User) -> None:
    """Three round trips, each closed: +2.00 ten days ago, -0.50 two days ago, and +0.87
    (+1.00 less 0.13 of fees) an hour ago; 2.37 in all, +0.37 over 7 days, +0.87 over 24 h."""
    now = utcnow()
    rounds = [("10", "0.40", "0.60", "0", timedelta(days=10), timedelta(days=9)),
              ("10", "0.50", "0.45", "0", timedelta(days=3), timedelta(days=2)),
              ("20", "0.30", "0.35", "0.065", timedelta(hours=2), timedelta(hours=1))]
    for size, bought, sold, fee, opened, closed in rounds:
        token = str(secrets.randbits(128))  # no price history: marked at the fill price
        _fill(user, token, "buy", size, bought, fee, now - opened)
        _fill(user, token, "sell", size, sold, fee, now - closed)


def test_the_accounts_curve_and_its_24h_and_7d_changes(bound_db, user, venue_control):
    account_fills(user)
    series = pnl_history.user_series(user)
    assert [p["total_pnl"] for p in series] == [Decimal(0), Decimal("2.00"), Decimal("2.00"),
                                                Decimal("1.50"), Decimal("1.50"),
                                                Decimal("2.37")]
    assert pnl_history.windows(series) == {"day": Decimal("0.87"), "week": Decimal("0.37")}
    # The curve ends at the figures given for now: a fresh unrealized loss counts in both.
    now = {"realized_pnl": Decimal("2.37"), "unrealized_pnl": Decimal("-1.00"),
           "total_pnl": Decimal("1.37")}
    assert pnl_history.windows(pnl_history.user_series(user, now)) == {
        "day": Decimal("-0.13"), "week": Decimal("-0.63")}


def test_no_fills_no_change(bound_db, user, venue_control):
    assert pnl_history.user_series(user) == []
    assert pnl_history.windows([]) == {"day": Decimal(0), "week": Decimal(0)}
