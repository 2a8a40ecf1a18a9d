"""REST trades: newest first, X-Pagination-* headers, config_id filter, 404 for others' trades."""

from __future__ import annotations

import uuid
from datetime import timedelta
from decimal import Decimal

from models.base import utcnow
from models.trading import Trade
from tests.http_helpers import json_body


def _trade(user, minutes_ago, **fields):
    values = {"token_id": "7", "market_slug": "m", "side": "buy", "requested_size": 10,
              "price": Decimal("0.5"), "status": "filled", "filled_size": 10,
              "filled_value": 5, "fee": Decimal("0.01"),
              "created_at": utcnow() - timedelta(minutes=minutes_ago)}
    values.update(fields)
    return Trade.create(user=user.id, **values)


def test_pagination_headers_and_order(client, auth_headers, user):
    made = [_trade(user, m) for m in range(3)]
    response = client.get("/api/trades?limit=2", headers=auth_headers)
    assert response.status_code == 200
    assert [t["id"] for t in json_body(response)] == [str(made[0].id), str(made[1].id)]
    assert {k: response.headers[k] for k in ("X-Pagination-Limit", "X-Pagination-Offset",
                                             "X-Pagination-Count", "X-Pagination-Has-Next")} \
        == {"X-Pagination-Limit": "2", "X-Pagination-Offset": "0", "X-Pagination-Count": "2",
            "X-Pagination-Has-Next": "true"}
    last = client.get("/api/trades?limit=2&offset=2", headers=auth_headers)
    assert last.headers["X-Pagination-Count"] == "1"
    assert last.headers["X-Pagination-Has-Next"] == "false"
    default = client.get("/api/trades", headers=auth_headers)
    assert default.headers["X-Pagination-Limit"] == "50"
    first = json_body(default)[0]
    assert set(first) >= {"id", "token_id", "market_slug", "side", "size", "price",
                          "filled_price", "usdc_value", "fee", "latency_ms", "status",
                          "created_at", "filled_at"}
    assert (first["size"], first["filled_price"], first["usdc_value"], first["fee"]) == (
        "10", "0.5", "5", "0.01")
    for bad in ("limit=0", "limit=1001", "offset=-1", "config_id=nope"):
        assert client.get(f"/api/trades?{bad}", headers=auth_headers).status_code == 400


def test_offset_past_what_the_database_holds_is_400_not_500(client, auth_headers, user):
    # SQLite's integers are 64-bit: an offset of 2**63 once reached it and answered 500
    _trade(user, 1)
    for huge in (2**63, 2**64, 10**30):
        answer = client.get(f"/api/trades?offset={huge}", headers=auth_headers)
        assert answer.status_code == 400, huge
        assert answer.get_json()["code"] == "validation_failed"
    edge = client.get(f"/api/trades?offset={2**31 - 1}", headers=auth_headers)
    assert edge.status_code == 200 and json_body(edge) == []


def test_config_filter_and_single_trade(client, auth_headers, user, make_trader):
    config_id = uuid.uuid4()
    copied = _trade(user, 1, config_id=config_id, latency_ms=350)
    _trade(user, 2)
    rows = json_body(client.get(f"/api/trades?config_id={config_id}", headers=auth_headers))
    assert [(r["id"], r["latency_ms"]) for r in rows] == [(str(copied.id), 350)]

    one = client.get(f"/api/trades/{copied.id}", headers=auth_headers)
    assert one.status_code == 200 and json_body(one)["id"] == str(copied.id)
    theirs = _trade(make_trader().user, 0)
    for missing in (theirs.id, uuid.uuid4()):
        response = client.get(f"/api/trades/{missing}", headers=auth_headers)
        assert response.status_code == 404 and json_body(response)["code"] == "not_found"


def test_scope(client, api_key, user):
    assert client.get("/api/trades",
                      headers={"Authorization": f"Bearer {api_key('read:trades')}"}
                      ).status_code == 200
    denied = client.get("/api/trades",
                        headers={"Authorization": f"Bearer {api_key('read:positions')}"})
    assert denied.status_code == 403
