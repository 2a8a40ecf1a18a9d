"""Concurrent orders: the venue's lock keeps fills, balances and the book consistent."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

from py_clob_client_v2.clob_types import MarketOrderArgsV2, OrderArgsV2, OrderType
from py_clob_client_v2.exceptions import PolyApiException


def test_racing_fok_buyers_never_overfill_a_resting_order(sandbox_venue, control, make_trader):
    market = control.add_market("race")
    yes = market["token_ids"][0]
    seller = make_trader("0")
    control.grant(seller.address, yes, "50")
    seller.client.create_and_post_order(
        OrderArgsV2(token_id=yes, price=Decimal("0.5"), size=Decimal(50), side="SELL")
    )
    buyers = [make_trader("10") for _ in range(20)]
    orders = [
        b.client.create_market_order(
            MarketOrderArgsV2(token_id=yes, amount=Decimal("2.5"), side="BUY",
                              price=Decimal("0.5"))
        )
        for b in buyers
    ]

    def post(pair) -> bool:
        buyer, order = pair
        try:
            buyer.client.post_order(order, OrderType.FOK)
            return True
        except PolyApiException as exc:
            assert "FOK" in exc.error_msg["error"]
            return False

    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(post, zip(buyers, orders, strict=True)))

    assert results.count(True) == 10
    assert seller.client.get_open_orders() == []
    assert control.balances(seller.address)["pusd"] == "25"
    bought = sum(
        (Decimal(control.balances(b.address)["positions"].get(yes, "0")) for b in buyers),
        Decimal(0),
    )
    assert bought == 50
    assert len(control.get("/data/trades", market=market["condition_id"])) == 10
    assert len(control.received_orders()) == 21
