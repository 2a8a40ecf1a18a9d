"""Orders through the official py-clob-client-v2: auth, signatures, checks, open orders, cancels."""

from __future__ import annotations

import json
import time
from decimal import Decimal

import httpx
import pytest
from py_clob_client_v2.clob_types import (
    CreateOrderOptions,
    OpenOrderParams,
    OrderArgsV2,
    OrderMarketCancelParams,
    OrderPayload,
    OrderType,
    PartialCreateOrderOptions,
    RequestArgs,
)
from py_clob_client_v2.exceptions import PolyApiException
from py_clob_client_v2.headers.headers import create_level_2_headers
from py_clob_client_v2.order_utils.model.order_data_v2 import order_to_json_v2

D = Decimal


def _limit(token: str, price: str, size: str, side: str = "BUY", **extra) -> OrderArgsV2:
    return OrderArgsV2(token_id=token, price=D(price), size=D(size), side=side, **extra)


def _rejection(excinfo) -> tuple[int, str]:
    error = excinfo.value
    return error.status_code, error.error_msg["error"]


def _post_raw(venue, trader, payload: dict) -> httpx.Response:
    """POST /order with a hand-made envelope and valid L2 headers for `trader`."""
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    headers = create_level_2_headers(
        trader.client.signer, trader.client.creds,
        RequestArgs(method="POST", request_path="/order", body=payload, serialized_body=body),
    )
    return httpx.post(f"{venue.clob_url}/order", headers=headers, content=body)


def test_gtc_order_lists_cancels_and_is_logged_once(sandbox_venue, control, make_trader):
    market = control.add_market("gtc-lifecycle")
    trader = make_trader("100")
    token = market["token_ids"][0]
    answer = trader.client.create_and_post_order(_limit(token, "0.40", "10"))
    assert answer["success"] is True and answer["status"] == "live"
    assert answer["orderID"].startswith("0x") and len(answer["orderID"]) == 66
    received = control.received_orders()
    assert len(received) == 1 and received[0]["order_id"] == answer["orderID"]
    assert received[0]["body"]["orderType"] == "GTC"
    assert received[0]["body"]["order"]["signatureType"] == 0

    orders = trader.client.get_open_orders(OpenOrderParams(market=market["condition_id"]))
    assert [o["id"] for o in orders] == [answer["orderID"]]
    assert orders[0]["original_size"] == "10" and orders[0]["price"] == "0.4"
    assert orders[0]["status"] == "LIVE" and orders[0]["outcome"] == "Yes"

    book = trader.client.get_order_book(token)
    assert book["bids"] == [{"price": "0.4", "size": "10"}]
    mirrored = trader.client.get_order_book(market["token_ids"][1])
    assert mirrored["asks"] == [{"price": "0.6", "size": "10"}]

    second = trader.client.create_and_post_order(_limit(token, "0.30", "5"))
    canceled = trader.client.cancel_order(OrderPayload(orderID=answer["orderID"]))
    assert canceled == {"canceled": [answer["orderID"]], "not_canceled": {}}
    again = trader.client.cancel_order(OrderPayload(orderID=answer["orderID"]))
    assert answer["orderID"] in again["not_canceled"]
    assert trader.client.cancel_all() == {"canceled": [second["orderID"]], "not_canceled": {}}
    assert trader.client.get_open_orders() == []


def test_cancel_market_orders_cancels_only_the_market_or_token_asked(sandbox_venue, control,
                                                                    make_trader):
    first, second = control.add_market("cancel-first"), control.add_market("cancel-second")
    trader = make_trader("100")
    yes, no = first["token_ids"]
    [yes_bid, no_bid, other_bid] = [
        trader.client.create_and_post_order(_limit(token, "0.30", "10"))["orderID"]
        for token in (yes, no, second["token_ids"][0])]
    by_token = trader.client.cancel_market_orders(OrderMarketCancelParams(asset_id=no))
    assert by_token == {"canceled": [no_bid], "not_canceled": {}}
    by_market = trader.client.cancel_market_orders(
        OrderMarketCancelParams(market=first["condition_id"]))
    assert by_market == {"canceled": [yes_bid], "not_canceled": {}}
    assert [o["id"] for o in trader.client.get_open_orders()] == [other_bid]


def test_tampered_order_is_refused_as_invalid_signature(sandbox_venue, control, make_trader):
    market = control.add_market("tamper")
    trader = make_trader("100")
    order = trader.client.create_order(_limit(market["token_ids"][0], "0.5", "10"))
    order.makerAmount = str(int(order.makerAmount) - 1)
    with pytest.raises(PolyApiException) as excinfo:
        trader.client.post_order(order)
    assert _rejection(excinfo) == (400, "invalid signature")
    assert trader.client.get_open_orders() == []


def test_order_for_the_other_exchange_is_refused(sandbox_venue, control, make_trader):
    market = control.add_market("wrong-exchange")
    trader = make_trader("100")
    # Signed for the neg-risk exchange, but the market is not neg-risk.
    order = trader.client.create_order(
        _limit(market["token_ids"][0], "0.5", "10"), PartialCreateOrderOptions(neg_risk=True)
    )
    with pytest.raises(PolyApiException) as excinfo:
        trader.client.post_order(order)
    assert _rejection(excinfo) == (400, "invalid signature")


def test_owner_and_signer_must_be_the_api_key(sandbox_venue, control, make_trader):
    market = control.add_market("owner-signer")
    alice, bob = make_trader("100"), make_trader("100")
    order = alice.client.create_order(_limit(market["token_ids"][0], "0.5", "10"))
    payload = order_to_json_v2(order, "someone-else", OrderType.GTC)
    response = _post_raw(sandbox_venue, alice, payload)
    assert response.status_code == 400
    assert response.json() == {"error": "the order owner has to be the owner of the API KEY"}
    # Bob posts Alice's correctly signed order with his own key.
    with pytest.raises(PolyApiException) as excinfo:
        bob.client.post_order(order)
    assert _rejection(excinfo) == (
        400, "the order signer address has to be the address of the API KEY"
    )


def test_order_checks_tick_size_min_size_expiry_and_balance(sandbox_venue, control, make_trader):
    market = control.add_market("checks")
    token = market["token_ids"][0]
    trader = make_trader("3")
    bad_tick = trader.client.builder.build_order(
        _limit(token, "0.555", "10"), CreateOrderOptions(tick_size="0.001", neg_risk=False)
    )
    with pytest.raises(PolyApiException) as excinfo:
        trader.client.post_order(bad_tick)
    status, message = _rejection(excinfo)
    assert status == 400 and "breaks minimum tick size rule: 0.01" in message

    with pytest.raises(PolyApiException) as excinfo:
        trader.client.create_and_post_order(_limit(token, "0.5", "1"))
    status, message = _rejection(excinfo)
    assert status == 400 and "lower than the minimum: 5" in message

    past = int(time.time()) - 10
    with pytest.raises(PolyApiException) as excinfo:
        trader.client.create_and_post_order(
            _limit(token, "0.1", "5", expiration=past), order_type=OrderType.GTD
        )
    assert _rejection(excinfo)[0] == 400

    with pytest.raises(PolyApiException) as excinfo:
        trader.client.create_and_post_order(_limit(token, "0.5", "10"))  # 5 pUSD > 3
    assert _rejection(excinfo) == (400, "not enough balance / allowance")

    ok = trader.client.create_and_post_order(_limit(token, "0.3", "10"))  # 3 pUSD
    assert ok["status"] == "live"
    with pytest.raises(PolyApiException) as excinfo:  # the first order reserves the balance
        trader.client.create_and_post_order(_limit(token, "0.1", "5"))
    assert _rejection(excinfo) == (400, "not enough balance / allowance")

    with pytest.raises(PolyApiException) as excinfo:  # selling shares it does not hold
        trader.client.create_and_post_order(_limit(token, "0.9", "5", side="SELL"))
    assert _rejection(excinfo) == (400, "not enough balance / allowance")


def test_gtd_order_expires_off_the_book(sandbox_venue, control, make_trader):
    market = control.add_market("gtd")
    trader = make_trader("100")
    soon = int(time.time()) + 2
    answer = trader.client.create_and_post_order(
        _limit(market["token_ids"][0], "0.2", "5", expiration=soon), order_type=OrderType.GTD
    )
    assert answer["status"] == "live"
    assert len(trader.client.get_open_orders()) == 1
    sandbox_venue.state.clock = lambda: time.time() + 5
    assert trader.client.get_open_orders() == []


def test_an_eoa_maker_off_the_allowlist_gets_the_venue_message(control, make_trader):
    # on by default: the allowlist is what keeps an (old) EOA account trading
    market = control.add_market("eoa-refusal")
    old, new = make_trader("100"), make_trader("100", allowlisted=False)
    control.approve_exchanges(new.address)  # approvals alone do not make it a maker
    with pytest.raises(PolyApiException) as excinfo:
        new.client.create_and_post_order(_limit(market["token_ids"][0], "0.5", "10"))
    assert _rejection(excinfo) == (
        400, "maker address not allowed, please use the deposit wallet flow"
    )
    accepted = old.client.create_and_post_order(_limit(market["token_ids"][0], "0.5", "10"))
    assert accepted["success"] is True


def test_deposit_wallet_orders_need_a_registered_owner(sandbox_venue, control, make_trader):
    from eth_account import Account

    market = control.add_market("deposit-wallet")
    wallet = Account.create().address
    owner = make_trader("0", allowlisted=False, signature_type=3, funder=wallet)
    control.fund(wallet, "100", seen=False)
    token = market["token_ids"][0]
    with pytest.raises(PolyApiException) as excinfo:
        owner.client.create_and_post_order(_limit(token, "0.5", "10"))
    assert _rejection(excinfo) == (400, "invalid signature")

    control.call("POST", "/deposit-wallets", {"wallet": wallet, "owner": owner.address},
                 expect=200)
    # the CLOB's cache sees the deposit (and the wallet's approvals) only after
    # /balance-allowance/update, as the venue
    with pytest.raises(PolyApiException) as unseen:
        owner.client.create_and_post_order(_limit(token, "0.5", "10"))
    assert _rejection(unseen) == (400, "not enough balance / allowance")
    assert owner.client.get_balance_allowance()["balance"] == "0"
    control.approve_exchanges(wallet)
    owner.client.update_balance_allowance()
    balance = owner.client.get_balance_allowance()
    assert balance["balance"] == "100000000"
    answer = owner.client.create_and_post_order(_limit(token, "0.5", "10"))
    assert answer["status"] == "live"
    sent = control.received_orders()[-1]["body"]["order"]
    assert sent["signatureType"] == 3 and sent["maker"] == sent["signer"] == wallet
    assert len(sent["signature"]) == 636
    orders = owner.client.get_open_orders()
    assert orders[0]["maker_address"] == wallet


def test_batch_orders_answer_each_order(sandbox_venue, control, make_trader):
    from py_clob_client_v2.clob_types import PostOrdersV2Args

    market = control.add_market("batch")
    trader = make_trader("100")
    token = market["token_ids"][0]
    good = trader.client.create_order(_limit(token, "0.2", "5"))
    small = trader.client.create_order(_limit(token, "0.2", "1"))
    answers = trader.client.post_orders([
        PostOrdersV2Args(order=good, orderType=OrderType.GTC),
        PostOrdersV2Args(order=small, orderType=OrderType.GTC),
    ])
    assert answers[0]["success"] is True
    assert answers[1]["success"] is False and "lower than the minimum" in answers[1]["errorMsg"]
    assert len(control.received_orders()) == 2
