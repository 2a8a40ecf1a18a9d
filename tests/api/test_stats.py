"""Stats: /api/stats/platform (public, zero-safe), /summary and /latency (the caller's)."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from decimal import Decimal

from models import User
from models.base import utcnow
from models.trading import Trade
from services.trading import orders, previews, stats
from tests.http_helpers import json_body


def _copy_trade(user, latency_ms, *, hours_ago=1, value="5", status="filled", **fields):
    at = utcnow() - timedelta(hours=hours_ago)
    return Trade.create(user=user.id, token_id="7", market_slug="m", side="buy",
                        requested_size=10, price=Decimal("0.5"), filled_size=10,
                        filled_value=Decimal(value), fee=Decimal("0.02"), status=status,
                        latency_ms=latency_ms, config_id=uuid.uuid4(), created_at=at,
                        filled_at=at if status == "filled" else None, **fields)


def test_platform_stats_on_empty_database(client):
    response = client.get("/api/stats/platform")
    assert response.status_code == 200
    body = response.get_json()
    assert body == {"median_latency_ms": 0, "p95_latency_ms": 0, "total_users": 0,
                    "total_trades_24h": 0, "total_volume_usdc_24h": "0"}
    assert re.match(r"^-?[0-9]+(\.[0-9]+)?$", body["total_volume_usdc_24h"])


def test_platform_stats_counts_users(client, bound_db):
    for _ in range(3):
        User.create(email=f"{uuid.uuid4().hex}@example.com")
    assert client.get("/api/stats/platform").get_json()["total_users"] == 3


def test_platform_stats_with_trades(client, user):
    for latency in (100, 200, 300, 400, 1000):
        _copy_trade(user, latency, value="2.5")
    _copy_trade(user, None, value="1")  # a manual trade: volume, no latency
    _copy_trade(user, 5, hours_ago=30)  # older than 24 h
    _copy_trade(user, 7, status="failed")
    body = json_body(client.get("/api/stats/platform"))
    assert body == {"median_latency_ms": 300, "p95_latency_ms": 1000, "total_users": 1,
                    "total_trades_24h": 6, "total_volume_usdc_24h": "13.5"}


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert (stats.percentile(values, 50), stats.percentile(values, 95),
            stats.percentile(values, 99)) == (50, 95, 99)
    assert stats.percentile([], 50) == 0 and stats.percentile([7], 99) == 7


def test_latency_last_seven_days(client, auth_headers, user):
    _copy_trade(user, 120, hours_ago=1)
    _copy_trade(user, 80, hours_ago=2)
    _copy_trade(user, 500, hours_ago=24 * 3)
    _copy_trade(user, 9999, hours_ago=24 * 8)  # outside the window
    body = json_body(client.get("/api/stats/latency", headers=auth_headers))
    assert (body["days"], body["count"], body["p50_ms"], body["p99_ms"], body["max_ms"]) == (
        7, 3, 120, 500, 500)
    assert len(body["per_day"]) == 7
    assert sum(day["count"] for day in body["per_day"]) == 3
    assert body["per_day"][-1]["date"] >= body["per_day"][0]["date"]
    assert client.get("/api/stats/latency").status_code == 401


def test_summary(client, auth_headers, user, make_trader, market):
    empty = json_body(client.get("/api/stats/summary", headers=auth_headers))
    assert empty == {"user_id": str(user.id), "total_pnl": "0", "realized_pnl": "0",
                     "trade_count": 0, "fees_paid": "0"}
    make_trader(user=user)
    for side in ("buy", "sell"):
        quote = previews.create(user, market.yes, side, "10", "market")
        orders.place_order(user, token_id=market.yes, side=side, size="10",
                           order_type="market", preview_id=quote["preview_id"])
    quote = previews.create(user, market.no, "buy", "10", "market")
    orders.place_order(user, token_id=market.no, side="buy", size="10", order_type="market",
                       preview_id=quote["preview_id"])
    body = json_body(client.get("/api/stats/summary", headers=auth_headers))
    # Yes: bought 0.51, sold 0.49 -> -0.2 realized; No: 10 @ 0.51 marked at 0.50 -> -0.1.
    assert (body["realized_pnl"], body["total_pnl"], body["trade_count"]) == (
        "-0.2", "-0.3", 3)
    assert body["fees_paid"] == "0"
