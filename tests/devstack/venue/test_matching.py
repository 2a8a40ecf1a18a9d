"""Matching, fills, fees, positions and the Data API, driven by official-client orders."""

from __future__ import annotations

from decimal import Decimal

import pytest
from py_clob_client_v2.clob_types import MarketOrderArgsV2, OrderArgsV2, OrderType, TradeParams
from py_clob_client_v2.exceptions import PolyApiException

D = Decimal


def _limit(token: str, price: str, size: str, side: str = "BUY") -> OrderArgsV2:
    return OrderArgsV2(token_id=token, price=D(price), size=D(size), side=side)


def test_limit_orders_match_with_price_time_priority(sandbox_venue, control, make_trader):
    market = control.add_market("priority")
    yes = market["token_ids"][0]
    first, second, taker = make_trader("0"), make_trader("0"), make_trader("100")
    control.grant(first.address, yes, "10")
    control.grant(second.address, yes, "10")
    a = first.client.create_and_post_order(_limit(yes, "0.60", "10", "SELL"))
    b = second.client.create_and_post_order(_limit(yes, "0.60", "10", "SELL"))

    answer = taker.client.create_and_post_order(_limit(yes, "0.65", "15"))
    assert answer["status"] == "matched"
    assert answer["makingAmount"] == "9" and answer["takingAmount"] == "15"  # at 0.60, not 0.65
    assert len(answer["transactionsHashes"]) == 1
    assert first.client.get_open_orders() == []
    left = second.client.get_open_orders()
    assert [o["id"] for o in left] == [b["orderID"]] and left[0]["size_matched"] == "5"
    assert a["orderID"] != b["orderID"]

    balances = control.balances(taker.address)
    assert balances["pusd"] == "91" and balances["positions"] == {yes: "15"}
    assert control.balances(first.address)["pusd"] == "6"
    trades = taker.client.get_trades(TradeParams(market=market["condition_id"]))
    assert len(trades) == 1 and trades[0]["trader_side"] == "TAKER"
    assert {m["matched_amount"] for m in trades[0]["maker_orders"]} == {"10", "5"}
    maker_view = second.client.get_trades()
    assert maker_view[0]["trader_side"] == "MAKER"


def test_buyers_of_both_outcomes_match_by_minting(sandbox_venue, control, make_trader):
    market = control.add_market("mint")
    yes, no = market["token_ids"]
    yes_buyer, no_buyer = make_trader("100"), make_trader("100")
    yes_buyer.client.create_and_post_order(_limit(yes, "0.55", "20"))
    answer = no_buyer.client.create_and_post_order(_limit(no, "0.45", "20"))
    assert answer["status"] == "matched"
    assert control.balances(yes_buyer.address) == {
        "address": yes_buyer.address, "pusd": "89", "positions": {yes: "20"},
    }
    assert control.balances(no_buyer.address)["positions"] == {no: "20"}
    assert control.balances(no_buyer.address)["pusd"] == "91"


def test_fok_is_all_or_nothing_and_fak_takes_what_exists(sandbox_venue, control, make_trader):
    market = control.add_market("fok-fak")
    yes = market["token_ids"][0]
    seller, buyer = make_trader("0"), make_trader("100")
    control.grant(seller.address, yes, "10")
    seller.client.create_and_post_order(_limit(yes, "0.50", "10", "SELL"))

    with pytest.raises(PolyApiException) as excinfo:
        buyer.client.create_and_post_market_order(
            MarketOrderArgsV2(token_id=yes, amount=D("10"), side="BUY", price=D("0.5")),
            order_type=OrderType.FOK,
        )
    assert excinfo.value.status_code == 400
    assert "FOK orders are fully filled or killed" in excinfo.value.error_msg["error"]
    assert control.balances(buyer.address)["pusd"] == "100"

    answer = buyer.client.create_and_post_market_order(
        MarketOrderArgsV2(token_id=yes, amount=D("10"), side="BUY", price=D("0.5")),
        order_type=OrderType.FAK,
    )
    assert answer["status"] == "matched"
    assert answer["makingAmount"] == "5" and answer["takingAmount"] == "10"
    assert buyer.client.get_open_orders() == []  # the unfilled rest is killed

    with pytest.raises(PolyApiException) as excinfo:
        buyer.client.create_and_post_market_order(
            MarketOrderArgsV2(token_id=yes, amount=D("5"), side="BUY", price=D("0.5")),
            order_type=OrderType.FAK,
        )
    assert "FAK orders are partially filled or killed" in excinfo.value.error_msg["error"]


def test_market_sell_against_house_liquidity_and_fees(sandbox_venue, control, make_trader):
    market = control.add_market("fees", fair_price="0.50", fee_rate="0.05", liquidity=True)
    yes = market["token_ids"][0]
    trader = make_trader("100")
    answer = trader.client.create_and_post_market_order(
        MarketOrderArgsV2(token_id=yes, amount=D("10"), side="BUY"), order_type=OrderType.FOK
    )
    # best house ask is 0.51: 10 pUSD buys 19.607843 shares
    assert answer["makingAmount"] == "10" and answer["takingAmount"] == "19.607843"
    fee = D("19.607843") * D("0.05") * D("0.51") * D("0.49")
    balance = D(control.balances(trader.address)["pusd"])
    assert balance == D(90) - fee.quantize(D("0.000001"))

    sell = trader.client.create_and_post_market_order(
        MarketOrderArgsV2(token_id=yes, amount=D("19.6"), side="SELL"), order_type=OrderType.FOK
    )
    assert sell["makingAmount"] == "19.6" and sell["takingAmount"] == "9.604"  # at 0.49


def test_data_api_trades_activity_and_positions(sandbox_venue, control, make_trader):
    market = control.add_market("data-api", fair_price="0.40", liquidity=True)
    yes = market["token_ids"][0]
    trader = make_trader("100")
    trader.client.create_and_post_order(_limit(yes, "0.41", "10"))
    user = trader.address.lower()

    taker_rows = control.get("/data/trades", user=user)
    assert len(taker_rows) == 1
    row = taker_rows[0]
    assert row["proxyWallet"] == user and row["side"] == "BUY" and row["asset"] == yes
    assert row["size"] == 10 and row["price"] == D("0.41") and row["outcome"] == "Yes"
    assert row["slug"] == "data-api" and row["conditionId"] == market["condition_id"]

    house = control.state()["house"].lower()
    assert control.get("/data/trades", user=house) == []  # house was the maker
    maker_rows = control.get("/data/trades", user=house, takerOnly="false")
    assert len(maker_rows) == 1 and maker_rows[0]["transactionHash"] == row["transactionHash"]
    assert maker_rows[0]["asset"] == market["token_ids"][1]  # the house minted the No side
    assert control.get("/data/trades", user=user, side="SELL") == []
    assert control.get("/data/trades", user=user, start=row["timestamp"] + 1) == []
    assert len(control.get("/data/trades", market=market["condition_id"])) == 1

    activity = control.get("/data/activity", user=user)
    assert [a["type"] for a in activity] == ["TRADE"]
    assert activity[0]["usdcSize"] == D("4.1")

    positions = control.get("/data/positions", user=user)
    assert len(positions) == 1
    position = positions[0]
    assert position["asset"] == yes and position["size"] == 10
    assert position["avgPrice"] == D("0.41") and position["initialValue"] == D("4.1")
    assert position["redeemable"] is False and position["oppositeAsset"] == market["token_ids"][1]

    board = control.get("/data/v1/leaderboard", timePeriod="ALL", orderBy="VOL")
    assert [r["proxyWallet"] for r in board] == [user] and board[0]["rank"] == "1"
