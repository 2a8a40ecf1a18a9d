"""REST paper book: positions and trades of simulated fills priced from the live book."""

from __future__ import annotations

from decimal import Decimal

from services.trading import paper
from tests.http_helpers import json_body


def test_paper_positions_and_trades(client, auth_headers, user, market):
    paper.fill(user, market.yes, "buy", "300")
    paper.fill(user, market.yes, "sell", "100")

    positions = client.get("/api/paper/positions", headers=auth_headers)
    assert positions.status_code == 200
    [position] = json_body(positions)
    assert (position["token_id"], position["size"], position["current_price"]) == (
        market.yes, "200", "0.5")
    assert position["cost_basis"] == str((Decimal("153.5") * 2 / 3).quantize(
        Decimal("0.000001")))
    assert position["resolved"] is False and position["claimable_value"] is None

    trades = client.get("/api/paper/trades?limit=1", headers=auth_headers)
    assert trades.status_code == 200
    [latest] = json_body(trades)
    assert (latest["side"], latest["size"], latest["filled_price"], latest["usdc_value"]) == (
        "sell", "100", "0.49", "49")
    assert trades.headers["X-Pagination-Has-Next"] == "true"
    assert trades.headers["X-Pagination-Count"] == "1"
    # The live ledger is untouched.
    assert json_body(client.get("/api/trades", headers=auth_headers)) == []


def test_paper_scopes(client, api_key, user):
    positions_key = {"Authorization": f"Bearer {api_key('read:positions')}"}
    assert client.get("/api/paper/positions", headers=positions_key).status_code == 200
    assert client.get("/api/paper/trades", headers=positions_key).status_code == 403
