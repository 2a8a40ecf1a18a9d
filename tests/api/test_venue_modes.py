"""REST orders while the venue restarts, is restricted or is down: 503 polymarket_unavailable
with Retry-After, and a retry with the same Idempotency-Key places the order exactly once."""

from __future__ import annotations

import dataclasses
import uuid
from decimal import Decimal

import pytest

from models.trading import Order, OrderPreview, Trade
from services.platform import venues
from services.trading import order_plan, orders
from services.wallets import venue_accounts
from tests.http_helpers import json_body


@pytest.fixture
def open_venue(venue_control):
    """The shared venue back to open and unthrottled after the test."""
    yield venue_control
    venue_control.call("POST", "/mode", {"mode": "open"}, expect=200)
    venue_control.call("POST", "/throttle", {"delay": 0}, expect=200)
    venue_control.call("DELETE", "/faults", expect=200)


def _order(client, headers, market):
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    quote = client.post("/api/markets/order/preview", json=body, headers=headers)
    assert quote.status_code == 200, quote.get_data(as_text=True)
    return {**body, "preview_id": json_body(quote)["preview_id"]}


def _accepted(venue_control, order_hash):
    return [e for e in venue_control.received_orders()
            if e["order_id"] == order_hash and e.get("response", {}).get("success")]


@pytest.mark.parametrize(("switch", "reason", "retry_after"), [
    ({"path": "/restart", "body": {"seconds": 60, "post_only_seconds": 60,
                                   "retry_after": 3}}, "venue_restarting", "3"),
    ({"path": "/mode", "body": {"mode": "post_only", "retry_after": 7}}, "venue_post_only",
     "7"),
    ({"path": "/mode", "body": {"mode": "cancel_only", "retry_after": 9}},
     "venue_cancel_only", "9"),
    ({"path": "/mode", "body": {"mode": "disabled"}}, "venue_disabled", None),
])
def test_restricted_mode_answers_503_and_the_same_key_places_once_reopened(
        client, auth_headers, me, market, open_venue, switch, reason, retry_after):
    body = _order(client, auth_headers, market)
    headers = {**auth_headers, "Idempotency-Key": str(uuid.uuid4())}
    status = 201 if switch["path"] == "/restart" else 200
    open_venue.call("POST", switch["path"], switch["body"], expect=status)

    refused = client.post("/api/markets/order", headers=headers, json=body)
    assert refused.status_code == 503, refused.get_data(as_text=True)
    error = json_body(refused)
    assert error["code"] == "polymarket_unavailable" and error["reason"] == reason
    assert "not placed" in error["error"]
    if retry_after is not None:
        assert refused.headers["Retry-After"] == retry_after
    else:
        assert int(refused.headers["Retry-After"]) >= 1
    # The refused attempt is kept (rejected, with why) but holds no preview and no trade.
    first = Order.get(Order.order_hash == error["order_id"])
    assert first.status == "rejected" and reason in first.error and first.preview is None
    assert Trade.select().where(Trade.order == first.id).count() == 0
    assert OrderPreview.get_by_id(body["preview_id"]).used_at is None

    open_venue.call("POST", "/mode", {"mode": "open"}, expect=200)
    placed = client.post("/api/markets/order", headers=headers, json=body)
    assert placed.status_code == 200, placed.get_data(as_text=True)
    answer = json_body(placed)
    assert answer["status"] == "filled" and answer["filled_size"] == "10"
    replay = client.post("/api/markets/order", headers=headers, json=body)
    assert replay.headers["Idempotent-Replay"] == "true" and json_body(replay) == answer
    # Exactly one order reached the venue's book, and one trade counts.
    assert len(_accepted(open_venue, answer["order_id"])) == 1
    assert Trade.select().where(Trade.user == me.user.id).count() == 1


def test_post_only_mode_lets_post_only_orders_and_cancels_through(
        client, auth_headers, me, market, open_venue):
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "limit",
            "price": "0.40"}
    quote = json_body(client.post("/api/markets/order/preview", json=body, headers=auth_headers))
    resting = json_body(client.post("/api/markets/order", headers=auth_headers,
                                json={**body, "preview_id": quote["preview_id"]}))
    assert resting["status"] == "accepted"
    open_venue.call("POST", "/restart", {"seconds": 0, "post_only_seconds": 60},
                    expect=201)
    assert open_venue.call("GET", "/mode", expect=200)["mode"] == "post_only"
    cancelled = client.delete(f"/api/markets/orders/{resting['order_id']}",
                              headers=auth_headers)
    assert cancelled.status_code == 200
    assert json_body(cancelled)["canceled"] == [resting["order_id"]]


def test_outage_on_a_live_order_is_503_and_a_retry_answers_the_order_that_got_through(
        client, auth_headers, me, market, open_venue):
    body = _order(client, auth_headers, market)
    headers = {**auth_headers, "Idempotency-Key": str(uuid.uuid4())}
    open_venue.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                        "status": 502, "count": 1}, expect=201)
    lost = client.post("/api/markets/order", headers=headers, json=body)
    assert lost.status_code == 503, lost.get_data(as_text=True)
    error = json_body(lost)
    assert error["code"] == "polymarket_unavailable" and "Retry-After" in lost.headers
    order = Order.get(Order.order_hash == error["order_id"])
    assert order.status == "pending"  # reconcilable: nothing lost

    # A retry while the venue still does not know it: 503 again, nothing new sent.
    again = client.post("/api/markets/order", headers=headers, json=body)
    assert again.status_code == 503 and json_body(again)["order_id"] == order.order_hash
    assert Order.select().where(Order.user == me.user.id).count() == 1

    # The order did reach the venue after all (the gateway lost only its answer).
    acct = venue_accounts.account(me.user)
    venues.client().clob.post_order(acct.creds, None, body=order.signed_body)  # type: ignore
    placed = client.post("/api/markets/order", headers=headers, json=body)
    assert placed.status_code == 200, placed.get_data(as_text=True)
    answer = json_body(placed)
    assert answer["order_id"] == order.order_hash and answer["status"] == "filled"
    assert Order.select().where(Order.user == me.user.id).count() == 1
    assert len(_accepted(open_venue, order.order_hash)) == 1


def test_throttled_venue_answers_late_but_the_order_outcome_is_kept(
        client, auth_headers, me, market, open_venue):
    body = _order(client, auth_headers, market)
    open_venue.call("POST", "/throttle", {"delay": "0.3", "seconds": 30, "path": "/clob"},
                    expect=200)
    placed = client.post("/api/markets/order", headers=auth_headers, json=body)
    assert placed.status_code == 200 and json_body(placed)["status"] == "filled"


@pytest.mark.parametrize(("switch", "reason"), [
    ({"path": "/restart", "body": {"seconds": 60, "post_only_seconds": 60,
                                   "retry_after": 4}}, "venue_restarting"),
    ({"path": "/mode", "body": {"mode": "cancel_only", "retry_after": 4}},
     "venue_cancel_only"),
    ({"path": "/faults", "body": {"path": "/clob/order", "method": "POST", "status": 502,
                                  "count": 1}}, None),
])
def test_selling_positions_in_a_restricted_mode_or_outage_is_503(
        client, auth_headers, me, market, open_venue, switch, reason):
    bought = client.post("/api/markets/order", headers=auth_headers,
                         json=_order(client, auth_headers, market))
    assert json_body(bought)["status"] == "filled"
    open_venue.call("POST", switch["path"], switch["body"], expect=None)
    headers = {**auth_headers, "Idempotency-Key": str(uuid.uuid4())}
    refused = client.post("/api/positions/sell", headers=headers,
                          json={"token_ids": [market.yes]})
    assert refused.status_code == 503, refused.get_data(as_text=True)
    error = json_body(refused)
    assert error["code"] == "polymarket_unavailable" and int(refused.headers["Retry-After"]) >= 1
    if reason is not None:
        assert error["reason"] == reason and refused.headers["Retry-After"] == "4"

    open_venue.call("POST", "/mode", {"mode": "open"}, expect=200)
    sold = client.post("/api/positions/sell", headers=headers, json={"token_ids": [market.yes]})
    assert sold.status_code == 200, sold.get_data(as_text=True)
    [result] = json_body(sold)["results"]
    assert result["status"] == "filled" and result["filled_size"] == "10"


def test_a_post_only_limit_order_rests_during_the_post_only_window(
        client, auth_headers, me, market, open_venue):
    open_venue.call("POST", "/restart", {"seconds": 0, "post_only_seconds": 60}, expect=201)
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "limit",
            "price": "0.40", "post_only": True}
    quote = client.post("/api/markets/order/preview", json=body, headers=auth_headers)
    assert quote.status_code == 200, quote.get_data(as_text=True)
    summary = json_body(quote)
    assert summary["post_only"] is True and "post-only" in summary["confirmation"]
    # The preview is bound to post_only: the same order without it is another order.
    plain = client.post("/api/markets/order", headers=auth_headers,
                        json={**body, "post_only": False, "preview_id": summary["preview_id"]})
    assert plain.status_code == 400 and "post_only" in json_body(plain)["error"]

    placed = client.post("/api/markets/order", headers=auth_headers,
                         json={**body, "preview_id": summary["preview_id"]})
    assert placed.status_code == 200, placed.get_data(as_text=True)
    answer = json_body(placed)
    assert answer["status"] == "accepted"
    [sent] = [e for e in open_venue.received_orders() if e["order_id"] == answer["order_id"]]
    assert sent.get("response", {}).get("success") is True
    assert Order.get(Order.order_hash == answer["order_id"]).status == "live"


@pytest.mark.parametrize(("change", "field"), [
    ({"price": "0.60"}, "post_only"),                       # would match the asks at once
    ({"order_type": "market", "price": None}, "post_only"),  # only limit orders rest
])
def test_a_post_only_order_that_cannot_rest_is_400(client, auth_headers, me, market, change,
                                                   field):
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "limit",
            "price": "0.40", "post_only": True, **change}
    refused = client.post("/api/markets/order/preview", json=body, headers=auth_headers)
    assert refused.status_code == 400, refused.get_data(as_text=True)
    error = json_body(refused)
    assert error["code"] == "validation_failed" and field in error["fields"]


def test_the_venues_post_only_crossing_refusal_is_a_clear_rejected_reason(me, market):
    # The book moved between pricing and sending: the product's plan (from the book as it
    # was, without asks) saw a resting order; the venue finds it crossing and refuses it.
    live = venues.client().clob.book(market.yes)
    stale = dataclasses.replace(live, asks=())
    request = order_plan.OrderRequest.checked(market.yes, "buy", "10", "limit", "0.60",
                                              post_only=True)
    prepared = orders.plan_and_sign(  # planned on the stale book, as the engine plans
        me.user.id, orders.live_account(me.user.id), request, book=stale,
        market=order_plan.market_info(market.yes, stale), origin=orders.Origin("sell"))
    [order] = orders.record_orders([prepared])
    settled = orders.settle(order, prepared, orders.post(prepared))
    assert settled.status == "rejected"
    assert settled.error.startswith("Post-only order refused")
    assert "invalid post-only order: order crosses book" in settled.error
    assert Decimal(settled.filled_size) == 0
