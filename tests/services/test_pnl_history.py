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
