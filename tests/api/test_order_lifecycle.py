"""REST: a delayed order and a failed trade as a user sees them (trades and orders views)."""

from __future__ import annotations

from datetime import timedelta

from services.trading import order_reconcile
from tests.http_helpers import json_body
from tests.venue_lifecycle import delay_market, fail_next_trade


def _market_buy(client, headers, token: str, size: str) -> dict:
    body = {"token_id": token, "side": "buy", "size": size, "order_type": "market"}
    quote = json_body(client.post("/api/markets/order/preview", json=body, headers=headers))
    response = client.post("/api/markets/order", headers=headers,
                           json={**body, "preview_id": quote["preview_id"]})
    assert response.status_code == 200, response.get_data(as_text=True)
    return json_body(response)


def _trade(client, headers, trade_id: str) -> dict:
    response = client.get(f"/api/trades/{trade_id}", headers=headers)
    assert response.status_code == 200
    return json_body(response)


def test_a_delayed_market_order_is_accepted_then_filled(client, auth_headers, me, market,
                                                        venue_control, venue_clock):
    delay_market(venue_control, market.condition_id, 4)
    placed = _market_buy(client, auth_headers, market.yes, "10")
    assert (placed["status"], placed["filled_size"]) == ("accepted", "0")
    trade = _trade(client, auth_headers, placed["trade_id"])
    assert (trade["status"], trade["settlement"]) == ("pending", None)

    venue_clock.advance(4)
    order_reconcile.reconcile_pending(older_than=timedelta(0))  # the maintenance sweep
    trade = _trade(client, auth_headers, placed["trade_id"])
    assert (trade["status"], trade["size"], trade["usdc_value"], trade["settlement"]) == (
        "filled", "10", "5.1", "matched")
    venue_clock.advance(6)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    trade = _trade(client, auth_headers, placed["trade_id"])
    assert trade["settlement"] == "confirmed" and trade["settled_at"] is not None


def test_a_failed_trade_shows_and_no_longer_counts(client, auth_headers, me, market,
                                                  venue_control, venue_clock):
    fail_next_trade(venue_control)
    placed = _market_buy(client, auth_headers, market.yes, "10")
    assert placed["status"] == "filled"
    venue_clock.advance(3)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    trade = _trade(client, auth_headers, placed["trade_id"])
    assert (trade["status"], trade["settlement"], trade["failed_size"], trade["usdc_value"]) \
        == ("failed", "failed", "10", "0")
    summary = json_body(client.get("/api/stats/summary", headers=auth_headers))
    assert summary["trade_count"] == 0
