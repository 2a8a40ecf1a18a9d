"""After placement, through the official client: delayed orders, trade settlement, failures."""

from __future__ import annotations

import time
from decimal import Decimal

import httpx
import pytest
from py_clob_client_v2.clob_types import (
    MarketOrderArgsV2,
    OrderArgsV2,
    OrderType,
    RequestArgs,
    TradeParams,
)
from py_clob_client_v2.exceptions import PolyApiException
from py_clob_client_v2.headers.headers import create_level_2_headers

D = Decimal


class Clock:
    """A venue clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def _clock(sandbox_venue) -> Clock:
    clock = Clock()
    sandbox_venue.state.clock = clock
    return clock


def _seller(control, make_trader, token: str, price: str, size: str):
    seller = make_trader("0")
    control.grant(seller.address, token, size)
    seller.client.create_and_post_order(
        OrderArgsV2(token_id=token, price=D(price), size=D(size), side="SELL"))
    return seller


def _buy(trader, token: str, amount: str, order_type=OrderType.FOK, price: str = "0.5") -> dict:
    return trader.client.create_and_post_market_order(
        MarketOrderArgsV2(token_id=token, amount=D(amount), side="BUY", price=D(price)),
        order_type=order_type)


def _raw_get(venue, trader, path: str, **params: str) -> httpx.Response:
    """An L2 GET the official client has no call for (its HMAC covers the path only)."""
    headers = create_level_2_headers(trader.client.signer, trader.client.creds,
                                     RequestArgs(method="GET", request_path=path))
    return httpx.get(f"{venue.clob_url}{path}", params=params or None, headers=headers)


def _order_by_id(venue, trader, order_id: str) -> list[dict]:
    answer = _raw_get(venue, trader, "/data/orders", id=order_id)
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def test_a_delayed_market_answers_delayed_and_matches_after_the_delay(
        sandbox_venue, control, make_trader):
    clock = _clock(sandbox_venue)
    market = control.add_market("delayed-match", seconds_delay=3)
    yes = market["token_ids"][0]
    gamma = control.get(f"/gamma/markets/{market['id']}")
    assert gamma["secondsDelay"] == 3
    _seller(control, make_trader, yes, "0.50", "10")
    buyer = make_trader("100")

    answer = _buy(buyer, yes, "5")
    assert answer["status"] == "delayed" and answer["success"] is True
    assert answer["makingAmount"] == "" and answer.get("tradeIDs") is None
    [queued] = _order_by_id(sandbox_venue, buyer, answer["orderID"])
    assert queued["status"] == "DELAYED" and queued["associate_trades"] == []
    assert control.balances(buyer.address)["positions"] == {}

    clock.now += 3
    [done] = _order_by_id(sandbox_venue, buyer, answer["orderID"])
    assert done["status"] == "MATCHED" and done["size_matched"] == "10"
    [trade_id] = done["associate_trades"]
    [trade] = buyer.client.get_trades(TradeParams(id=trade_id))
    assert (trade["status"], trade["size"], trade["taker_order_id"]) == (
        "MATCHED", "10", answer["orderID"])
    assert control.balances(buyer.address) == {
        "address": buyer.address, "pusd": "95", "positions": {yes: "10"}}
    # Finished: the single-order route answers 200 with nothing in it, as the venue does.
    empty = _raw_get(sandbox_venue, buyer, f"/data/order/{answer['orderID']}")
    assert (empty.status_code, empty.content) == (200, b"")


def test_a_delayed_fok_that_cannot_fill_ends_cancelled_unfilled(sandbox_venue, control,
                                                               make_trader):
    clock = _clock(sandbox_venue)
    market = control.add_market("delayed-kill", seconds_delay=2)
    yes = market["token_ids"][0]
    seller = _seller(control, make_trader, yes, "0.50", "10")
    buyer = make_trader("100")
    answer = _buy(buyer, yes, "5")
    assert answer["status"] == "delayed"
    seller.client.cancel_all()  # the liquidity leaves during the delay
    clock.now += 2
    [done] = _order_by_id(sandbox_venue, buyer, answer["orderID"])
    assert (done["status"], done["size_matched"], done["associate_trades"]) == (
        "CANCELED", "0", [])
    assert control.balances(buyer.address)["pusd"] == "100"


def test_trades_settle_through_their_statuses(sandbox_venue, control, make_trader):
    clock = _clock(sandbox_venue)
    market = control.add_market("settling")
    yes = market["token_ids"][0]
    _seller(control, make_trader, yes, "0.50", "10")
    buyer = make_trader("100")
    answer = _buy(buyer, yes, "5")
    [trade_id] = answer["tradeIDs"]

    def status() -> str:
        [trade] = buyer.client.get_trades(TradeParams(id=trade_id))
        return trade["status"]

    state = control.state()["lifecycle"]
    assert state["empty_finished_orders"] is True
    assert status() == "MATCHED"
    clock.now += float(state["mined_after"])
    assert status() == "MINED"
    clock.now += float(state["confirmed_after"])
    assert status() == "CONFIRMED"


def test_a_failed_trade_is_undone(sandbox_venue, control, make_trader):
    clock = _clock(sandbox_venue)
    market = control.add_market("failing")
    yes = market["token_ids"][0]
    seller = _seller(control, make_trader, yes, "0.50", "10")
    control.call("POST", "/lifecycle", {"fail_next": 1, "mined_after": 1,
                                        "confirmed_after": 2}, expect=200)
    buyer = make_trader("100")
    answer = _buy(buyer, yes, "5")
    [trade_id] = answer["tradeIDs"]
    assert control.balances(buyer.address)["positions"] == {yes: "10"}
    clock.now += 1
    [trade] = buyer.client.get_trades(TradeParams(id=trade_id))
    assert trade["status"] == "RETRYING"
    clock.now += 1
    [trade] = buyer.client.get_trades(TradeParams(id=trade_id))
    assert trade["status"] == "FAILED"
    assert control.balances(buyer.address) == {
        "address": buyer.address, "pusd": "100", "positions": {}}
    assert control.balances(seller.address) == {
        "address": seller.address, "pusd": "0", "positions": {yes: "10"}}
    assert control.state()["lifecycle"]["fail_next"] == 0
    # The next trade settles normally.
    _seller(control, make_trader, yes, "0.50", "10")
    again = _buy(buyer, yes, "2", OrderType.FAK)
    clock.now += 2
    [trade] = buyer.client.get_trades(TradeParams(id=again["tradeIDs"][0]))
    assert trade["status"] == "CONFIRMED"


def test_switches_refuse_bad_values(control):
    assert control.call("POST", "/lifecycle", {"fail_next": -1}, expect=400)
    assert control.call("POST", "/lifecycle", {"mined_after": "-2"}, expect=400)
    market = control.market(index=0)
    assert control.call("POST", f"/markets/{market['condition_id']}/delay",
                        {"seconds": "x"}, expect=400)
    assert control.call("POST", "/lifecycle", {"empty_finished_orders": False},
                        expect=200)["empty_finished_orders"] is False


SDK_PARSE = """
from polymarket.models.clob.account import ClobTrade, OpenOrder
from polymarket.models.clob.order_response import RawOrderResponse, normalize_order_response
accepted = normalize_order_response(RawOrderResponse.model_validate(payload["answer"]))
order = OpenOrder.model_validate(payload["order"])
trades = [ClobTrade.model_validate(t) for t in payload["trades"]]
result = {"status": accepted.status, "order": [order.status, str(order.size_matched),
                                               list(order.associate_trades)],
          "trades": [[t.status, str(t.size)] for t in trades]}
"""


def test_the_official_sdk_reads_the_delayed_answer_order_and_trade_statuses(
        sandbox_venue, control, make_trader):
    """The sandbox's delayed answer, order listing and trade statuses parse in polymarket-client."""
    from tests.sdk_env import sdk_result

    clock = _clock(sandbox_venue)
    market = control.add_market("sdk-shapes", seconds_delay=1)
    yes = market["token_ids"][0]
    _seller(control, make_trader, yes, "0.50", "10")
    buyer = make_trader("100")
    answer = _buy(buyer, yes, "5")
    clock.now += 1
    [order] = _order_by_id(sandbox_venue, buyer, answer["orderID"])
    [trade_id] = order["associate_trades"]
    rows = []
    for step in (0, 2, 6):
        clock.now += step
        rows.extend(buyer.client.get_trades(TradeParams(id=trade_id)))
    parsed = sdk_result(SDK_PARSE, {"answer": answer, "order": order, "trades": rows})
    assert parsed == {"status": "delayed", "order": ["MATCHED", "10", [trade_id]],
                      "trades": [["MATCHED", "10"], ["MINED", "10"], ["CONFIRMED", "10"]]}


def test_a_fault_after_serving_loses_only_the_answer(sandbox_venue, control, make_trader):
    market = control.add_market("lost-answers")
    yes = market["token_ids"][0]
    _seller(control, make_trader, yes, "0.50", "30")
    buyer = make_trader("100")
    for fault in ({"status": 502}, {"reset": True}):
        control.call("POST", "/faults", {"path": "/clob/order", "method": "POST",
                                         "after": True, **fault}, expect=201)
        with pytest.raises(PolyApiException):
            _buy(buyer, yes, "5")
    served = [e for e in control.received_orders() if e["api_key"] == buyer.client.creds.api_key]
    assert [e["status"] for e in served] == [200, 200]  # the venue took both orders
    assert control.balances(buyer.address)["positions"] == {yes: "20"}


def _seller_at_two_prices(control, make_trader, token: str):
    """Two resting sells of 10: at 0.50 and at 0.52."""
    _seller(control, make_trader, token, "0.50", "10")
    _seller(control, make_trader, token, "0.52", "10")


def test_associate_trades_switched_off_leaves_every_order_without_trades(
        sandbox_venue, control, make_trader):
    """ACCOUNTS.md §12: "an empty associate_trades tuple does not mean an order has no fills"."""
    _clock(sandbox_venue)
    market = control.add_market("no-associates")
    yes = market["token_ids"][0]
    _seller(control, make_trader, yes, "0.50", "10")
    control.call("POST", "/lifecycle", {"associate_trades": False}, expect=200)
    buyer = make_trader("100")
    answer = _buy(buyer, yes, "5")
    [order] = _order_by_id(sandbox_venue, buyer, answer["orderID"])
    assert (order["status"], order["size_matched"], order["associate_trades"]) == (
        "MATCHED", "10", [])
    [trade] = buyer.client.get_trades(TradeParams(id=answer["tradeIDs"][0]))
    assert trade["taker_order_id"] == answer["orderID"]  # the fill is there, in /data/trades
    control.call("POST", "/lifecycle", {"associate_trades": True}, expect=200)
    [order] = _order_by_id(sandbox_venue, buyer, answer["orderID"])
    assert order["associate_trades"] == answer["tradeIDs"]


def test_a_split_match_shows_its_trades_one_by_one(sandbox_venue, control, make_trader):
    clock = _clock(sandbox_venue)
    market = control.add_market("split-match")
    yes = market["token_ids"][0]
    _seller_at_two_prices(control, make_trader, yes)
    control.call("POST", "/lifecycle", {"split_parts": 2, "split_every": 3}, expect=200)
    buyer = make_trader("100")
    answer = _buy(buyer, yes, "10.2", OrderType.FAK, price="0.52")
    assert (answer["takingAmount"], answer["makingAmount"]) == ("20", "10.2")
    mine = TradeParams(market=market["condition_id"])

    [first] = buyer.client.get_trades(mine)
    [order] = _order_by_id(sandbox_venue, buyer, answer["orderID"])
    # The order counts the whole match at once; /data/trades shows its first part only.
    assert (order["size_matched"], order["associate_trades"]) == ("20", [first["id"]])
    assert (first["id"], first["size"], first["price"]) == (answer["tradeIDs"][0], "10", "0.5")
    clock.now += 3
    second, again = buyer.client.get_trades(mine)  # newest first
    assert again == {**first, "status": "MINED"}
    assert (second["size"], second["price"], second["taker_order_id"]) == (
        "10", "0.52", answer["orderID"])
    assert second["status"] == "MATCHED" and int(second["match_time"]) == \
        int(first["match_time"]) + 3
    [order] = _order_by_id(sandbox_venue, buyer, answer["orderID"])
    assert order["associate_trades"] == [first["id"], second["id"]]
    [by_id] = buyer.client.get_trades(TradeParams(id=second["id"]))
    assert by_id == second


def test_open_orders_by_asset_need_the_market(sandbox_venue, control, make_trader):
    """ACCOUNTS.md §12: filtering open orders by asset_id now also needs market."""
    market = control.add_market("asset-filter")
    yes = market["token_ids"][0]
    seller = _seller(control, make_trader, yes, "0.50", "10")
    refused = _raw_get(sandbox_venue, seller, "/data/orders", asset_id=yes)
    assert refused.status_code == 400 and "market" in refused.json()["error"]
    both = _raw_get(sandbox_venue, seller, "/data/orders", asset_id=yes,
                    market=market["condition_id"])
    assert both.status_code == 200 and len(both.json()["data"]) == 1


def test_split_switches_refuse_bad_values(control):
    assert control.call("POST", "/lifecycle", {"split_parts": 0}, expect=400)
    assert control.call("POST", "/lifecycle", {"split_every": "-1"}, expect=400)
