"""services/trading/trades.py: the ledger as users see it, newest first, paginated, per config."""

from __future__ import annotations

import uuid
from datetime import timedelta
from decimal import Decimal

import pytest

from models.base import utcnow
from models.trading import Trade
from services.platform import errors
from services.trading import orders, previews, trades


def _trade(user, minutes_ago: int, **fields) -> Trade:
    values = {"token_id": "1", "market_slug": "m", "side": "buy", "requested_size": 10,
              "price": Decimal("0.5"), "status": "filled", "filled_size": 10,
              "filled_value": 5, "created_at": utcnow() - timedelta(minutes=minutes_ago)}
    values.update(fields)
    return Trade.create(user=user.id, **values)


def test_a_placed_order_becomes_a_trade(trader, market):
    quote = previews.create(trader.user, market.yes, "buy", "10", "market")
    placed = orders.place_order(trader.user, token_id=market.yes, side="buy", size="10",
                                order_type="market", preview_id=quote["preview_id"])
    view = trades.get_trade(trader.user, placed.id)  # the Trade shares its Order's id
    # A manual order's execution: our price and fee, no target to measure slippage against.
    execution = view.pop("execution")
    assert (execution["price"], execution["fee"]) == (Decimal("0.51"), Decimal(0))
    assert execution["source"] is None and execution["slippage_bps"] is None
    assert view == {
        "id": placed.id, "token_id": market.yes, "market_slug": market.slug,
        "side": "buy", "size": Decimal(10), "price": Decimal("0.53"),
        "filled_price": Decimal("0.51"), "usdc_value": Decimal("5.1"), "fee": Decimal(0),
        "latency_ms": None, "status": "filled", "created_at": view["created_at"],
        "filled_at": view["filled_at"], "config_id": None, "order_id": placed.order_hash,
        "settlement": "matched", "failed_size": Decimal(0), "settled_at": None}
    assert view["filled_at"] >= view["created_at"]


def test_pagination_newest_first(trader):
    made = [_trade(trader.user, minutes_ago=m) for m in range(5)]  # made[0] is newest
    page = trades.list_trades(trader.user, limit=2, offset=0)
    assert [t["id"] for t in page.items] == [made[0].id, made[1].id]
    assert (page.limit, page.offset, page.has_next) == (2, 0, True)
    last = trades.list_trades(trader.user, limit=2, offset=4)
    assert [t["id"] for t in last.items] == [made[4].id] and not last.has_next
    full_last = trades.list_trades(trader.user, limit=5, offset=0)
    assert len(full_last.items) == 5 and not full_last.has_next
    with pytest.raises(errors.ValidationFailed):
        trades.list_trades(trader.user, limit=0)


def test_config_filter_and_ownership(trader, make_trader):
    config_id = uuid.uuid4()
    copied = _trade(trader.user, 1, config_id=config_id, latency_ms=420)
    _trade(trader.user, 2)
    other = make_trader()
    theirs = _trade(other.user, 3, config_id=config_id)

    page = trades.list_trades(trader.user, config_id=config_id)
    assert [t["id"] for t in page.items] == [copied.id]
    assert page.items[0]["latency_ms"] == 420
    with pytest.raises(errors.NotFound):
        trades.get_trade(trader.user, theirs.id)
    with pytest.raises(errors.NotFound):
        trades.get_trade(trader.user, uuid.uuid4())


def test_unfilled_trade_shows_requested_size(trader):
    pending = _trade(trader.user, 0, status="pending", filled_size=0, filled_value=0)
    view = trades.get_trade(trader.user, pending.id)
    assert (view["size"], view["filled_price"], view["status"]) == (
        Decimal(10), Decimal(0), "pending")
