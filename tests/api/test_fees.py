"""REST on a market with a taker fee: the preview shows it, and the trade, the statistics and
a fill found later by reconciliation carry what the venue charged."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from services.trading import order_reconcile
from tests.http_helpers import json_body
from tests.venue_lifecycle import delay_market, hand_moved_clock


def _pusd(venue_control, address: str) -> Decimal:
    return Decimal(str(venue_control.balances(address)["pusd"]))


def _market(client, headers, token: str, side: str = "buy") -> tuple[dict, dict]:
    body = {"token_id": token, "side": side, "size": "10", "order_type": "market"}
    quote = json_body(client.post("/api/markets/order/preview", json=body, headers=headers))
    response = client.post("/api/markets/order", headers=headers,
                           json={**body, "preview_id": quote["preview_id"]})
    assert response.status_code == 200, response.get_data(as_text=True)
    return quote, json_body(response)


def test_a_market_buy_shows_and_records_the_venue_fee(client, auth_headers, user, make_trader,
                                                      make_sandbox_market, venue_control):
    me = make_trader(user=user)  # the signed-in user, funded
    market = make_sandbox_market(fee_rate="0.0725")
    before = _pusd(venue_control, me.maker)
    quote, placed = _market(client, auth_headers, market.yes)
    assert quote["fee"] == "0.18118"  # 10 x 0.0725 x 0.51 x 0.49, to 5 dp
    assert placed["status"] == "filled"
    trade = json_body(client.get(f"/api/trades/{placed['trade_id']}", headers=auth_headers))
    charged = before - _pusd(venue_control, me.maker) - Decimal(trade["usdc_value"])
    assert Decimal(trade["fee"]) == charged == Decimal("0.18118")
    summary = json_body(client.get("/api/stats/summary", headers=auth_headers))
    assert Decimal(summary["fees_paid"]) == charged


def test_a_delayed_fill_shows_the_fee_the_venue_charged(client, auth_headers, user, make_trader,
                                                        make_sandbox_market, venue_control,
                                                        venue_server):
    me = make_trader(user=user)
    market = make_sandbox_market(fee_rate="0.0725")
    delay_market(venue_control, market.condition_id, 4)
    before = _pusd(venue_control, me.maker)
    with hand_moved_clock(venue_server, venue_control) as clock:
        _, placed = _market(client, auth_headers, market.yes)
        assert placed["status"] == "accepted"
        clock.advance(4)
        order_reconcile.reconcile_pending(older_than=timedelta(0))
    trade = json_body(client.get(f"/api/trades/{placed['trade_id']}", headers=auth_headers))
    charged = before - _pusd(venue_control, me.maker) - Decimal(trade["usdc_value"])
    assert trade["status"] == "filled" and charged == Decimal("0.18118")
    assert Decimal(trade["fee"]) == charged  # was 0: a fill found later had no fee


def test_a_market_sell_pays_its_fee_out_of_the_proceeds(client, auth_headers, user,
                                                       make_trader, make_sandbox_market,
                                                       venue_control):
    me = make_trader(user=user)
    market = make_sandbox_market(fee_rate="0.0725")
    venue_control.grant(me.maker, market.yes, "10")  # held a while: the CLOB has seen them
    before = _pusd(venue_control, me.maker)
    quote, placed = _market(client, auth_headers, market.yes, "sell")
    assert placed["status"] == "filled", placed
    trade = json_body(client.get(f"/api/trades/{placed['trade_id']}", headers=auth_headers))
    received = _pusd(venue_control, me.maker) - before
    assert Decimal(quote["fee"]) == Decimal(trade["fee"]) == Decimal("0.18118")
    assert received == Decimal(trade["usdc_value"]) - Decimal(trade["fee"])


def test_a_market_buy_sized_by_amount_leaves_room_for_its_fee(client, auth_headers, user,
                                                              make_trader, make_sandbox_market,
                                                              venue_control):
    me = make_trader(user=user)
    market = make_sandbox_market(fee_rate="0.0725")
    body = {"token_id": market.yes, "side": "buy", "amount": "5", "order_type": "market"}
    quote = json_body(client.post("/api/markets/order/preview", json=body, headers=auth_headers))
    cost, fee = Decimal(quote["estimated_cost"]), Decimal(quote["fee"])
    assert fee > 0 and cost == Decimal("4.82")  # the fee is paid on top of the budget
    assert Decimal(5) - Decimal("0.01") < cost + fee <= Decimal(5)
    before = _pusd(venue_control, me.maker)
    response = client.post("/api/markets/order", headers=auth_headers,
                           json={**body, "preview_id": quote["preview_id"]})
    placed = json_body(response)
    assert placed["status"] == "filled"
    assert placed["filled_size"] == quote["estimated_shares"]
    assert Decimal(0) < before - _pusd(venue_control, me.maker) <= Decimal(5)
