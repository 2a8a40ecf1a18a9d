"""The sandbox's order versions: GET /version, a version bump that refuses orders signed for
the old version with ``order_version_mismatch``, and V3 markets whose outcomes carry
position ids (orders signed for Exchange V3, EIP-712 version "3")."""

from __future__ import annotations

import json
from decimal import Decimal

import httpx
import pytest
from py_clob_client_v2.clob_types import CreateOrderOptions, OrderArgsV2, RequestArgs
from py_clob_client_v2.exceptions import PolyApiException
from py_clob_client_v2.headers.headers import create_level_2_headers

from venue.models import Side
from venue.order_versions import is_position_id
from venue.signing import build_signed_order

D = Decimal


def _post_signed(venue, trader, token: str, *, version: str, neg_risk: bool = False,
                 exchange_v3: str | None = None) -> httpx.Response:
    """POST /order an order our signer built for exchange ``version``, with L2 headers."""
    signed = build_signed_order(trader.key, 137, token, Side.BUY, D("0.5"), D("10"),
                                neg_risk=neg_risk, exchange_version=version,
                                exchange_v3_address=exchange_v3)
    payload = signed.payload(trader.client.creds.api_key)
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    headers = create_level_2_headers(
        trader.client.signer, trader.client.creds,
        RequestArgs(method="POST", request_path="/order", body=payload, serialized_body=body))
    return httpx.post(f"{venue.clob_url}/order", headers=headers, content=body)


def test_a_version_bump_refuses_orders_signed_for_the_old_version(sandbox_venue, control,
                                                                   make_trader):
    market = control.add_market("version-bump")
    token = market["token_ids"][0]
    trader = make_trader("100")
    assert control.get("/clob/version") == {"version": 2}
    assert control.call("POST", "/version", {"version": 3}, expect=200) == {"version": 3}
    assert control.get("/clob/version") == {"version": 3}
    # The official V2 client signs for version 2: refused with the venue's marker.
    with_old = trader.client.builder.build_order(
        OrderArgsV2(token_id=token, price=D("0.5"), size=D("10"), side="BUY"),
        CreateOrderOptions(tick_size="0.01", neg_risk=False))
    with pytest.raises(PolyApiException) as refused:
        trader.client.post_order(with_old)
    assert refused.value.status_code == 400
    assert "order_version_mismatch" in refused.value.error_msg["error"]
    exchange_v3 = control.state()["exchange_v3"]
    answer = _post_signed(sandbox_venue, trader, token, version="3", exchange_v3=exchange_v3)
    assert answer.status_code == 200 and answer.json()["status"] == "live", answer.text
    control.call("POST", "/reset", expect=200)
    assert control.get("/clob/version") == {"version": 2}
    assert control.call("POST", "/version", {"version": 7}, expect=400)["error"].startswith(
        "version must be one of 2, 3")


def test_position_id_markets_take_v3_orders_only(sandbox_venue, control, make_trader):
    market = control.add_market("v3-market", position_ids=True, neg_risk=True)
    token = market["token_ids"][1]
    assert market["position_ids"] is True and all(map(is_position_id, market["token_ids"]))
    trader = make_trader("100")
    stale = _post_signed(sandbox_venue, trader, token, version="2", neg_risk=True)
    assert stale.status_code == 400 and stale.json() == {"error": "order_version_mismatch"}
    placed = _post_signed(sandbox_venue, trader, token, version="3")
    assert placed.status_code == 200 and placed.json()["status"] == "live", placed.text
    orders = control.received_orders()
    assert orders[-1]["order_id"] == placed.json()["orderID"]
    # An ordinary market next to it still takes V2 orders.
    plain = control.add_market("v2-market")
    assert not any(map(is_position_id, plain["token_ids"]))
    assert _post_signed(sandbox_venue, trader, plain["token_ids"][0],
                        version="2").status_code == 200
