"""REST orders: preview, place, list, cancel, over the sandbox venue; idempotent under threads."""

from __future__ import annotations

import threading
import uuid
from decimal import Decimal

import httpx
import pytest

from tests.http_helpers import json_body, serving


def _preview(client, headers, body):
    response = client.post("/api/markets/order/preview", json=body, headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    return json_body(response)


def test_preview_then_market_order(client, auth_headers, me, market, venue_control):
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    quote = _preview(client, auth_headers, body)
    assert quote["price"] == "0.53" and quote["estimated_cost"] == "5.1"
    assert quote["expected_price"] == "0.51" and quote["fee"] == "0"
    assert quote["market_slug"] == market.slug and quote["outcome"] == "Yes"
    assert quote["confirmation"].startswith("Buy 10.00 shares")
    assert quote["confirmation"].endswith("for about 5.10 pUSD.")

    response = client.post("/api/markets/order", headers=auth_headers,
                           json={**body, "preview_id": quote["preview_id"]})
    assert response.status_code == 200
    placed = json_body(response)
    assert placed["status"] == "filled"
    assert (placed["filled_size"], placed["average_price"]) == ("10", "0.51")
    received = [e for e in venue_control.received_orders() if e["order_id"] == placed["order_id"]]
    assert len(received) == 1 and received[0]["body"]["order"]["maker"] == me.maker
    # A manual order shows its own stages where it is shown: the answer and its trade.
    stages = placed["execution"]["stages"]
    assert stages["placement_ms"] >= 0 and stages["ack_ms"] >= 0
    assert (stages["taker_delay_ms"], stages["decision_ms"], placed["execution"]["source"]) \
        == (None, None, None)
    [trade] = json_body(client.get("/api/trades", headers=auth_headers))
    assert trade["execution"]["stages"] == stages and trade["execution"]["price"] == "0.51"

    again = client.post("/api/markets/order", headers=auth_headers,
                        json={**body, "preview_id": quote["preview_id"]})
    assert again.status_code == 400
    assert "already used" in json_body(again)["error"]


def test_a_market_buy_sized_by_amount_spends_at_most_it(client, auth_headers, me, market,
                                                         venue_control):
    body = {"token_id": market.yes, "side": "buy", "amount": "5.00", "order_type": "market"}
    quote = _preview(client, auth_headers, body)
    assert quote["amount"] == "5" and quote["estimated_cost"] == "5"
    shares = Decimal(quote["estimated_shares"])
    assert shares > 9 and Decimal(quote["size"]) == shares.quantize(Decimal("0.01"), "ROUND_FLOOR")
    assert quote["confirmation"].endswith("spending at most 5.00 pUSD (5.00 pUSD).")
    before = Decimal(str(venue_control.balances(me.maker)["pusd"]))
    # The order names the amount, not the shares its preview expected.
    placed = json_body(client.post("/api/markets/order", headers=auth_headers,
                                   json={**body, "preview_id": quote["preview_id"]}))
    assert placed["status"] == "filled" and Decimal(placed["filled_size"]) == shares
    spent = before - Decimal(str(venue_control.balances(me.maker)["pusd"]))
    assert Decimal(0) < spent <= Decimal(5)
    # Its preview binds the amount: another amount is another order.
    quote = _preview(client, auth_headers, body)
    other = client.post("/api/markets/order", headers=auth_headers,
                        json={**body, "amount": "4", "preview_id": quote["preview_id"]})
    assert other.status_code == 400 and "amount 4 (preview: 5)" in json_body(other)["error"]
    shares_too = client.post("/api/markets/order", headers=auth_headers,
                             json={**body, "amount": None, "size": quote["size"],
                                   "preview_id": quote["preview_id"]})
    assert shares_too.status_code == 400
    assert "amount none (preview: 5)" in json_body(shares_too)["error"]


def test_limit_order_list_and_cancel(client, auth_headers, me, market):
    body = {"token_id": market.yes, "side": "BUY", "size": "20", "order_type": "limit",
            "price": "0.45"}
    quote = _preview(client, auth_headers, body)
    placed = json_body(client.post("/api/markets/order", headers=auth_headers,
                               json={**body, "preview_id": quote["preview_id"]}))
    assert placed["status"] == "accepted" and placed["filled_size"] == "0"

    listed = client.get("/api/markets/orders", headers=auth_headers)
    assert listed.status_code == 200
    [order] = json_body(listed)
    assert order == {"order_id": placed["order_id"], "token_id": market.yes, "side": "buy",
                     "price": "0.45", "size": "20", "filled_size": "0", "status": "live",
                     "order_type": "limit", "created_at": order["created_at"]}

    second = {**body, "price": "0.44"}
    quote2 = _preview(client, auth_headers, second)
    other = json_body(client.post("/api/markets/order", headers=auth_headers,
                              json={**second, "preview_id": quote2["preview_id"]}))

    one = client.delete(f"/api/markets/orders/{placed['order_id']}", headers=auth_headers)
    assert one.status_code == 200
    assert json_body(one) == {"canceled": [placed["order_id"]], "not_canceled": {}}
    assert client.delete("/api/markets/orders/0xdeadbeef", headers=auth_headers
                         ).status_code == 404
    everything = client.delete("/api/markets/orders", headers=auth_headers)
    assert json_body(everything)["canceled"] == [other["order_id"]]
    assert json_body(client.get("/api/markets/orders", headers=auth_headers)) == []
    trades = json_body(client.get("/api/trades", headers=auth_headers))
    assert {t["status"] for t in trades} == {"cancelled"}


def test_cannot_cancel_another_users_order(client, auth_headers, me, make_trader, market):
    from services.trading import order_reads, orders, previews

    other = make_trader()
    quote = previews.create(other.user, market.yes, "buy", "10", "limit", "0.40")
    theirs = orders.place_order(other.user, token_id=market.yes, side="buy", size="10",
                                order_type="limit", price="0.40",
                                preview_id=quote["preview_id"])
    response = client.delete(f"/api/markets/orders/{theirs.order_hash}", headers=auth_headers)
    assert response.status_code == 404 and json_body(response)["code"] == "not_found"
    assert [o["order_id"] for o in order_reads.open_orders(other.user)] == [theirs.order_hash]


@pytest.mark.parametrize(("body", "field"), [
    ({"side": "buy", "size": "10", "order_type": "limit"}, "price"),
    ({"side": "hold", "size": "10", "order_type": "market"}, "side"),
    ({"side": "buy", "size": "10", "order_type": "stop"}, "order_type"),
    ({"side": "buy", "size": 10.5, "order_type": "market"}, "size"),
    ({"side": "buy", "size": "-1", "order_type": "market"}, "size"),
    ({"side": "buy", "size": "10", "order_type": "limit", "price": "1.5"}, "price"),
    ({"side": "buy", "size": "10", "order_type": "limit", "price": "0.455"}, "price"),
    ({"side": "buy", "size": "3", "order_type": "limit", "price": "0.45"}, "size"),
    ({"side": "buy", "order_type": "market"}, "size"),
    ({"side": "buy", "size": "10", "amount": "5", "order_type": "market"}, "amount"),
    ({"side": "sell", "amount": "5", "order_type": "market"}, "amount"),
    ({"side": "buy", "amount": "5", "order_type": "limit", "price": "0.45"}, "amount"),
    ({"side": "buy", "amount": "0.99", "order_type": "market"}, "amount"),
    ({"side": "buy", "amount": "5.001", "order_type": "market"}, "amount"),
    ({"side": "buy", "amount": 5.5, "order_type": "market"}, "amount"),
])
def test_bad_requests_are_400(client, auth_headers, me, market, body, field):
    for path in ("/api/markets/order/preview", "/api/markets/order"):
        response = client.post(path, headers=auth_headers,
                               json={"token_id": market.yes, **body,
                                     **({"preview_id": str(uuid.uuid4())}
                                        if path.endswith("order") else {})})
        assert response.status_code == 400, (path, response.get_data(as_text=True))
        error = json_body(response)
        assert error["code"] == "validation_failed"
        assert field in error.get("fields", {}) or field in error["error"]


def test_preview_problems_are_400_with_the_reason(client, auth_headers, me, market):
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    missing = client.post("/api/markets/order", headers=auth_headers, json=body)
    assert missing.status_code == 400 and "preview_id" in json_body(missing)["error"]
    quote = _preview(client, auth_headers, body)
    mismatch = client.post("/api/markets/order", headers=auth_headers,
                           json={**body, "size": "12", "preview_id": quote["preview_id"]})
    assert mismatch.status_code == 400
    assert "size 12 (preview: 10)" in json_body(mismatch)["error"]


def test_unknown_token_404_and_poor_wallet_402(client, auth_headers, user, make_trader,
                                               market, venue_control):
    unknown = client.post("/api/markets/order/preview", headers=auth_headers, json={
        "token_id": "123456789", "side": "buy", "size": "10", "order_type": "market"})
    assert unknown.status_code == 404 and json_body(unknown)["code"] == "not_found"

    make_trader(user=user, funds="1")
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    quote = _preview(client, auth_headers, body)
    before = len(venue_control.received_orders())
    poor = client.post("/api/markets/order", headers=auth_headers,
                       json={**body, "preview_id": quote["preview_id"]})
    assert poor.status_code == 402 and json_body(poor)["code"] == "insufficient_balance"
    assert len(venue_control.received_orders()) == before


def test_venue_refusal_is_a_rejected_response(client, auth_headers, me, market):
    body = {"token_id": market.yes, "side": "sell", "size": "10", "order_type": "limit",
            "price": "0.6"}
    quote = _preview(client, auth_headers, body)
    response = client.post("/api/markets/order", headers=auth_headers,
                           json={**body, "preview_id": quote["preview_id"]})
    assert response.status_code == 200
    assert json_body(response)["status"] == "rejected"
    assert json_body(response)["reason"] == "not enough balance / allowance"


def test_scopes(client, api_key, me, market):
    reader = {"Authorization": f"Bearer {api_key('read:markets')}"}
    assert client.get("/api/markets/orders", headers=reader).status_code == 200
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    denied = client.post("/api/markets/order/preview", headers=reader, json=body)
    assert denied.status_code == 403 and json_body(denied)["code"] == "scope_required"
    assert client.delete("/api/markets/orders", headers=reader).status_code == 403
    trader_key = {"Authorization": f"Bearer {api_key('trade:execute')}"}
    assert client.post("/api/markets/order/preview", headers=trader_key,
                       json=body).status_code == 200
    assert client.get("/api/markets/orders", headers=trader_key).status_code == 403
    canceller = {"Authorization": f"Bearer {api_key('trade:cancel')}"}
    assert client.delete("/api/markets/orders", headers=canceller).status_code == 200
    assert client.post("/api/markets/order", json=body).status_code == 401


@pytest.fixture
def live_server(app):
    """The app on a real threaded HTTP server."""
    with serving(app) as base:
        yield base


def test_parallel_retries_under_one_key_send_one_order(live_server, auth_headers, me, market,
                                                       venue_control):
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    with httpx.Client(base_url=live_server, timeout=30) as http:
        quote = http.post("/api/markets/order/preview", json=body, headers=auth_headers).json()
    key = str(uuid.uuid4())
    headers = {**auth_headers, "Idempotency-Key": key}
    payload = {**body, "preview_id": quote["preview_id"]}
    barrier = threading.Barrier(8)
    answers: list[httpx.Response] = []
    lock = threading.Lock()

    def send() -> None:
        with httpx.Client(base_url=live_server, timeout=30) as http:
            barrier.wait()
            response = http.post("/api/markets/order", json=payload, headers=headers)
        with lock:
            answers.append(response)

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {r.status_code for r in answers} <= {200, 409}
    done = [r.json() for r in answers if r.status_code == 200]
    assert done and len({d["order_id"] for d in done}) == 1
    order_id = done[0]["order_id"]
    assert len([e for e in venue_control.received_orders() if e["order_id"] == order_id]) == 1
    with httpx.Client(base_url=live_server, timeout=30) as http:
        replay = http.post("/api/markets/order", json=payload, headers=headers)
    assert replay.status_code == 200 and replay.headers["Idempotent-Replay"] == "true"
    assert replay.json()["order_id"] == order_id
    sent_by_me = [e for e in venue_control.received_orders()
                  if e["body"]["order"]["maker"] == me.maker]
    assert len(sent_by_me) == 1


def test_every_stored_order_status_has_the_apis_word():
    """The one translation of an order's stored status: every status the records hold
    has a word, and a cancelled order reads filled once it moved shares."""
    from models import trading
    from schemas.trading import placed_status

    stored = {value for name, value in vars(trading).items()
              if name.startswith("ORDER_") and isinstance(value, str)}
    assert stored == set(trading.ORDER_PREDECESSORS) | {trading.ORDER_PENDING}
    words = {status: placed_status(status, Decimal(0)) for status in sorted(stored)}
    assert words == {"cancelled": "rejected", "delayed": "accepted", "failed": "rejected",
                     "live": "accepted", "matched": "filled", "pending": "accepted",
                     "rejected": "rejected"}
    assert placed_status("cancelled", Decimal("0.5")) == "filled"  # a FAK's partial fill
