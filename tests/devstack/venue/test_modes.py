"""Restarts (425, then post-only), cancel-only, disabled and throttling, through the official
SDK and plain HTTP (ACCOUNTS.md §7.4)."""

from __future__ import annotations

import time
from decimal import Decimal

import httpx
import pytest
from py_clob_client_v2.clob_types import OrderArgsV2, OrderPayload, OrderType, PostOrdersV2Args
from py_clob_client_v2.exceptions import PolyApiException

from devstack.venue.modes import ERR_CANCEL_ONLY, ERR_DISABLED, ERR_POST_ONLY
from devstack.venue.rejections import ERR_POST_ONLY_CROSSES
from tests.conftest import DEADLINE
from tests.venue_lifecycle import VenueClock


def _order(trader, token, price="0.40"):
    return trader.client.create_order(
        OrderArgsV2(token_id=token, price=Decimal(price), size=Decimal(10), side="BUY"))


def test_restart_answers_425_on_order_endpoints_then_post_only(sandbox_venue, control,
                                                                make_trader):
    token = control.add_market("restart-me", liquidity=True)["token_ids"][0]
    trader = make_trader("100")
    # The venue's clock moves by hand: the restart's 0.6 s are the venue's, not however long
    # a loaded machine takes to sign and send the requests below.
    clock = VenueClock()
    sandbox_venue.state.clock = clock
    control.call("POST", "/restart", {"seconds": "0.6", "post_only_seconds": 30,
                                      "retry_after": 2}, expect=201)
    with pytest.raises(PolyApiException) as caught:
        trader.client.post_order(_order(trader, token))
    assert caught.value.status_code == 425
    raw = httpx.get(f"{sandbox_venue.clob_url}/data/orders")
    assert raw.status_code == 425 and raw.headers["Retry-After"] == "2"
    # Market data is not order-related: it keeps flowing.
    assert httpx.get(f"{sandbox_venue.clob_url}/book",
                     params={"token_id": token}).status_code == 200

    assert control.call("GET", "/mode", expect=200)["seconds_left"] == "0.600"
    clock.advance(0.7)
    assert control.call("GET", "/mode", expect=200)["mode"] == "post_only"
    refused = httpx.post(f"{sandbox_venue.clob_url}/order", json={"postOnly": False})
    assert refused.status_code == 503 and refused.json()["code"] == "post_only_mode"
    assert refused.json()["error"] == ERR_POST_ONLY
    assert refused.json()["retry_after_seconds"] == int(refused.headers["Retry-After"])
    with pytest.raises(PolyApiException) as caught:
        trader.client.post_order(_order(trader, token))
    assert caught.value.status_code == 503
    # A batch is answered per order; post-only orders go through.
    batch = trader.client.post_orders([PostOrdersV2Args(order=_order(trader, token, p),
                                                        orderType=OrderType.GTC)
                                       for p in ("0.40", "0.39")])
    assert [(a["success"], a["errorMsg"]) for a in batch] == [(False, ERR_POST_ONLY)] * 2
    resting = trader.client.post_order(_order(trader, token), post_only=True)
    assert resting["success"] is True and resting["status"] == "live"
    cancelled = trader.client.cancel_order(OrderPayload(orderID=resting["orderID"]))
    assert cancelled["canceled"] == [resting["orderID"]]


def test_cancel_only_allows_cancels_and_disabled_refuses_them(control, make_trader):
    token = control.add_market("restricted", liquidity=True)["token_ids"][0]
    trader = make_trader("100")
    resting = trader.client.post_order(_order(trader, token))
    control.call("POST", "/mode", {"mode": "cancel_only", "retry_after": 4}, expect=200)
    with pytest.raises(PolyApiException) as caught:
        trader.client.post_order(_order(trader, token))
    assert caught.value.status_code == 503 and ERR_CANCEL_ONLY in str(caught.value)
    control.call("POST", "/mode", {"mode": "disabled"}, expect=200)
    with pytest.raises(PolyApiException) as caught:
        trader.client.cancel_order(OrderPayload(orderID=resting["orderID"]))
    assert caught.value.status_code == 503 and ERR_DISABLED in str(caught.value)
    control.call("POST", "/mode", {"mode": "cancel_only", "seconds": 30}, expect=200)
    cancelled = trader.client.cancel_order(OrderPayload(orderID=resting["orderID"]))
    assert cancelled["canceled"] == [resting["orderID"]]
    control.call("POST", "/mode", {"mode": "open"}, expect=200)
    assert trader.client.post_order(_order(trader, token))["success"] is True
    assert control.call("POST", "/mode", {"mode": "closed"}).get("error")


def test_throttle_delays_answers_for_its_window(sandbox_venue, control):
    token = control.market(index=0)["token_ids"][0]
    # The delay is long beside what a request takes on a starved machine (0.4 s seen at
    # load 30), so "not held" is told from "held" at any speed.
    control.call("POST", "/throttle", {"delay": "2", "seconds": "1"}, expect=200)
    started = time.monotonic()
    assert httpx.get(f"{sandbox_venue.clob_url}/book", params={"token_id": token},
                     timeout=DEADLINE).status_code == 200
    assert time.monotonic() - started >= 2
    assert control.call("GET", "/mode", expect=200)["throttle"] is None  # the window ended
    started = time.monotonic()
    httpx.get(f"{sandbox_venue.clob_url}/book", params={"token_id": token}, timeout=DEADLINE)
    assert time.monotonic() - started < 2
    assert control.call("POST", "/reset", expect=200) == {"ok": True}


def test_a_post_only_order_that_would_match_is_refused_with_the_venues_text(control,
                                                                            make_trader):
    token = control.add_market("post-only-cross", liquidity=True)["token_ids"][0]
    trader = make_trader("100")
    with pytest.raises(PolyApiException) as caught:
        trader.client.post_order(_order(trader, token, "0.60"), post_only=True)
    assert caught.value.status_code == 400
    assert ERR_POST_ONLY_CROSSES in str(caught.value)
    # Not post-only, the same price matches at once.
    assert trader.client.post_order(_order(trader, token, "0.60"))["status"] == "matched"
