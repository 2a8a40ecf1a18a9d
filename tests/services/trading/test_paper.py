"""services/trading/paper.py: simulated fills priced by walking the live sandbox book, fees
applied."""

from __future__ import annotations

import uuid
from datetime import timedelta
from decimal import Decimal

import pytest

from models.base import utcnow
from models.trading import Order, Trade
from services.platform import errors
from services.trading import paper


def test_buy_walks_the_book_level_by_level(trader, market, venue_control):
    fill = paper.fill(trader.user, market.yes, "buy", "300")
    # 250 @ 0.51 then 50 @ 0.52: the book's prices, not a made-up one.
    assert (fill.status, fill.filled_size, fill.filled_value) == (
        "filled", Decimal(300), Decimal("153.5"))
    assert fill.fee == 0
    assert venue_control.balances(trader.maker)["positions"] == {}  # nothing was sent
    assert Order.select().count() == 0 and Trade.select().count() == 0
    [position] = paper.list_positions(trader.user)
    assert (position["size"], position["cost_basis"], position["current_price"]) == (
        Decimal(300), Decimal("153.5"), Decimal("0.50"))
    assert position["unrealized_pnl"] == Decimal("-3.5")


def test_fees_amount_limit_and_sells(trader, make_sandbox_market):
    market = make_sandbox_market(fee_rate="0.05")
    bought = paper.fill(trader.user, market.yes, "buy", amount="51")  # 100 shares @ 0.51
    assert (bought.filled_size, bought.filled_value) == (Decimal(100), Decimal("51"))
    assert bought.fee == (Decimal(100) * Decimal("0.05") * Decimal("0.51") * Decimal("0.49")
                          ).quantize(Decimal("0.000001"))
    capped = paper.fill(trader.user, market.yes, "buy", "300", limit_price="0.51")
    assert capped.filled_size == 250  # only the 0.51 level is within the limit
    sold = paper.fill(trader.user, market.yes, "sell", "1000")  # capped at the holding
    assert sold.filled_size == 350
    [position] = paper.list_positions(trader.user, active_only=False)
    assert position["size"] == 0 and position["cost_basis"] == 0
    assert position["realized_pnl"] < 0  # bought above, sold below the midpoint, paid fees


def test_failed_fills_say_why(trader, make_sandbox_market):
    empty = make_sandbox_market(liquidity=False)
    failed = paper.fill(trader.user, empty.yes, "buy", "10")
    assert (failed.status, failed.reason) == ("failed", "Nothing on the book to fill against.")
    nothing = paper.fill(trader.user, empty.yes, "sell", "10")
    assert nothing.reason == "No paper position to sell."
    with pytest.raises(errors.NotFound):
        paper.fill(trader.user, "999999999", "buy", "10")
    with pytest.raises(errors.ValidationFailed):
        paper.fill(trader.user, empty.yes, "sell", amount="10")


def test_copy_engine_fields_and_trade_list(trader, market):
    config_id = uuid.uuid4()
    first = paper.fill(trader.user, market.yes, "buy", "10", config_id=config_id,
                       detected_at=utcnow() - timedelta(milliseconds=300))
    paper.fill(trader.user, market.no, "buy", "10")
    assert first.latency_ms >= 300
    page = paper.list_trades(trader.user, limit=1)
    assert page.has_next and page.items[0]["token_id"] == market.no
    mine = paper.list_trades(trader.user, config_id=config_id)
    assert [t["id"] for t in mine.items] == [first.id]
    assert mine.items[0]["filled_price"] == Decimal("0.51")
