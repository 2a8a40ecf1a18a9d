"""REST positions: bare array with every Position field, resolution, sell at market."""

from __future__ import annotations

import uuid

from services.trading import orders, previews
from tests.http_helpers import json_body


def _buy(user, token, size):
    quote = previews.create(user, token, "buy", size, "market")
    return orders.place_order(user, token_id=token, side="buy", size=size, order_type="market",
                              preview_id=quote["preview_id"])


def test_positions_after_fills_and_resolution(client, auth_headers, user, make_trader, market,
                                              venue_control, fresh_venue_cache):
    make_trader(user=user)
    assert json_body(client.get("/api/positions", headers=auth_headers)) == []
    _buy(user, market.yes, "10")
    response = client.get("/api/positions", headers=auth_headers)
    assert response.status_code == 200
    assert not [h for h in response.headers if h[0].lower().startswith("x-pagination")]
    [position] = json_body(response)
    assert position == {
        "token_id": market.yes, "market_slug": market.slug,
        "market_title": f"Will {market.slug} happen?", "outcome": "Yes", "size": "10",
        "cost_basis": "5.1", "current_price": "0.5", "current_value": "5",
        "unrealized_pnl": "-0.1", "realized_pnl": "0", "resolved": False, "status": "OPEN",
        "claimable_value": None, "merge_value": None}

    venue_control.call("POST", f"/markets/{market.condition_id}/resolve", {"winner": 0},
                       expect=200)
    [resolved] = json_body(client.get("/api/positions", headers=auth_headers))
    assert (resolved["resolved"], resolved["current_price"], resolved["claimable_value"]) == (
        True, "1", "10")
    assert resolved["status"] == "REDEEMABLE"
    assert resolved["unrealized_pnl"] == "4.9"


def test_sell_positions_at_market(client, auth_headers, user, make_trader, market, api_key):
    make_trader(user=user)
    _buy(user, market.yes, "10")
    headers = {**auth_headers, "Idempotency-Key": str(uuid.uuid4())}
    response = client.post("/api/positions/sell", headers=headers,
                           json={"token_ids": [market.yes]})
    assert response.status_code == 200
    [result] = json_body(response)["results"]
    assert (result["token_id"], result["status"], result["filled_size"]) == (
        market.yes, "filled", "10")
    replay = client.post("/api/positions/sell", headers=headers,
                         json={"token_ids": [market.yes]})
    assert replay.headers["Idempotent-Replay"] == "true"
    assert json_body(replay) == json_body(response)
    assert json_body(client.get("/api/positions", headers=auth_headers)) == []
    [closed] = json_body(client.get("/api/positions?active_only=false", headers=auth_headers))
    assert closed["size"] == "0" and closed["realized_pnl"] == "-0.2"

    assert client.post("/api/positions/sell", headers=auth_headers,
                       json={}).status_code == 400
    claimer = {"Authorization": f"Bearer {api_key('wallet:write', 'read:positions')}"}
    denied = client.post("/api/positions/sell", headers=claimer,
                         json={"token_ids": [market.yes]})
    assert denied.status_code == 403 and json_body(denied)["code"] == "scope_required"
    assert client.get("/api/positions", headers=claimer).status_code == 200
