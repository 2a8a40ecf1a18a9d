"""REST orders on half-cent and quarter-cent markets (ticks 0.005, 0.0025): prices land on
the tick grid (a market order's protective limit too) and off-grid limits are refused
before anything is sent."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.http_helpers import json_body


@pytest.mark.parametrize(("tick", "off_grid", "on_grid"),
                         [("0.005", "0.537", "0.435"), ("0.0025", "0.4376", "0.4375")])
def test_orders_on_fine_tick_markets_stay_on_the_grid(client, auth_headers, me,
                                                      make_sandbox_market, venue_control,
                                                      tick, off_grid, on_grid):
    market = make_sandbox_market(tick_size=tick, fair_price="0.5")
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    quote = json_body(client.post("/api/markets/order/preview", json=body, headers=auth_headers))
    assert Decimal(quote["price"]) % Decimal(tick) == 0  # the protective limit, on the grid
    placed = json_body(client.post("/api/markets/order", headers=auth_headers,
                               json={**body, "preview_id": quote["preview_id"]}))
    assert placed["status"] == "filled", placed
    limit = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "limit"}
    refused = client.post("/api/markets/order/preview", headers=auth_headers,
                          json={**limit, "price": off_grid})
    assert refused.status_code == 400
    assert f"tick size {tick}" in json_body(refused)["error"]
    quote = json_body(client.post("/api/markets/order/preview", headers=auth_headers,
                              json={**limit, "price": on_grid}))
    rested = json_body(client.post("/api/markets/order", headers=auth_headers,
                               json={**limit, "price": on_grid,
                                     "preview_id": quote["preview_id"]}))
    assert rested["status"] == "accepted", rested
    sent = [e for e in venue_control.received_orders()
            if e["body"]["order"]["maker"].lower() == me.maker.lower()]
    assert [e["status"] for e in sent] == [200, 200]  # nothing off-grid left the app
