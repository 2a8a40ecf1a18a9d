"""Resolution (Gamma, positions, redemption), the house's quotes moved or pulled, and
injected faults (5xx, 429, stalls)."""

from __future__ import annotations

import json
import time
from decimal import Decimal

import httpx
import pytest
from py_clob_client_v2.clob_types import OrderArgsV2
from py_clob_client_v2.exceptions import PolyApiException


def test_resolution_closes_the_market_and_makes_positions_redeemable(
    sandbox_venue, control, make_trader
):
    market = control.add_market("resolve-me", fair_price="0.5", liquidity=True)
    yes, no = market["token_ids"]
    trader = make_trader("100")
    trader.client.create_and_post_order(
        OrderArgsV2(token_id=yes, price=Decimal("0.51"), size=Decimal(10), side="BUY")
    )
    resting = trader.client.create_and_post_order(
        OrderArgsV2(token_id=no, price=Decimal("0.1"), size=Decimal(5), side="BUY")
    )
    assert resting["status"] == "live"

    control.call("POST", f"/markets/{market['condition_id']}/resolve", {"winner": "Yes"},
                 expect=200)
    gamma = control.get("/gamma/markets", slug="resolve-me")[0]
    assert gamma["closed"] is True
    assert json.loads(gamma["outcomePrices"]) == ["1", "0"]
    assert gamma["umaResolutionStatus"] == "resolved"
    assert trader.client.get_open_orders() == []  # resolution cancels resting orders
    assert control.get("/gamma/markets", slug="resolve-me", closed="false") == []

    position = control.get("/data/positions", user=trader.address)[0]
    assert position["redeemable"] is True and position["curPrice"] == 1
    assert position["currentValue"] == 10

    with pytest.raises(PolyApiException) as excinfo:
        trader.client.create_and_post_order(
            OrderArgsV2(token_id=yes, price=Decimal("0.5"), size=Decimal(5), side="BUY")
        )
    assert excinfo.value.status_code == 400

    paid = control.call("POST", "/redeem",
                        {"address": trader.address, "condition_id": market["condition_id"]},
                        expect=200)
    assert paid == {"paid": "10"}
    assert control.balances(trader.address)["pusd"] == "104.9"
    activity = control.get("/data/activity", user=trader.address, type="REDEEM")
    assert [(a["type"], a["usdcSize"], a["side"]) for a in activity] == [("REDEEM", 10, "")]
    assert control.get("/data/positions", user=trader.address) == []


def _top(control, token: str) -> tuple[str | None, str | None]:
    book = control.get("/clob/book", token_id=token)
    return ((book["bids"][-1]["price"] if book["bids"] else None),
            (book["asks"][-1]["price"] if book["asks"] else None))


def test_the_house_quotes_move_and_are_pulled_on_command(sandbox_venue, control):
    market = control.add_market("house-moves", fair_price="0.5", liquidity=True)
    yes, cid = market["token_ids"][0], market["condition_id"]
    assert _top(control, yes) == ("0.49", "0.51")
    control.call("POST", f"/markets/{cid}/house", {"fair_price": "0.3"}, expect=200)
    assert _top(control, yes) == ("0.29", "0.31")
    control.call("POST", f"/markets/{cid}/house", {"liquidity": False}, expect=200)
    assert _top(control, yes) == (None, None)  # the book is empty, the market still open
    assert control.get("/gamma/markets", slug="house-moves")[0]["closed"] is False
    control.call("POST", f"/markets/{cid}/house", {"liquidity": True}, expect=200)
    assert _top(control, yes) == ("0.29", "0.31")
    bad = control.call("POST", f"/markets/{cid}/house", {"liquidity": "no"})
    assert "liquidity must be true or false" in json.dumps(bad)


def test_faults_answer_errors_then_recover(sandbox_venue, control):
    token = control.market(index=0)["token_ids"][0]
    control.call("POST", "/faults", {"path": "/clob/book", "count": 2, "status": 500},
                 expect=201)
    control.call("POST", "/faults",
                 {"path": "/data/trades", "count": 1, "status": 429, "retry_after": 7},
                 expect=201)
    book = f"{sandbox_venue.clob_url}/book"
    assert httpx.get(book, params={"token_id": token}).status_code == 500
    assert httpx.get(book, params={"token_id": token}).status_code == 500
    assert httpx.get(book, params={"token_id": token}).status_code == 200
    limited = httpx.get(f"{sandbox_venue.data_url}/trades")
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "7"
    assert limited.json() == {"error": "Too Many Requests"}
    assert httpx.get(f"{sandbox_venue.data_url}/trades").status_code == 200


def test_delay_fault_makes_a_client_time_out(sandbox_venue, control):
    control.call("POST", "/faults",
                 {"path": "/gamma/markets", "count": 1, "status": 0, "delay": "5"}, expect=201)
    with pytest.raises(httpx.ReadTimeout):
        httpx.get(f"{sandbox_venue.gamma_url}/markets", timeout=0.5)
    # The fault was spent on the first request: the next is not held its 5 s (a wide
    # margin, so a busy machine's slow answer is not mistaken for the delay).
    started = time.monotonic()
    assert httpx.get(f"{sandbox_venue.gamma_url}/markets", timeout=30).status_code == 200
    assert time.monotonic() - started < 4
    control.call("POST", "/faults", {"path": "/clob", "count": 5}, expect=201)
    assert control.state()["faults"][0]["remaining"] == 5
    control.call("DELETE", "/faults", expect=200)
    assert httpx.get(f"{sandbox_venue.clob_url}/time").status_code == 200


def test_reset_restores_the_seeded_catalog(sandbox_venue, control, make_trader):
    before = control.state()["markets"]
    control.add_market("temporary")
    trader = make_trader("5")
    control.strict_accounts(False, grandfathered=[trader.address])
    control.call("POST", "/reset", expect=200)
    # the account rules are back on, and a reset forgets the allowlist (make_trader's)
    assert control.strict_accounts() == {"enabled": True, "allowlisted": [],
                                         "grandfathered": []}
    after = control.state()["markets"]
    assert [m["condition_id"] for m in after] == [m["condition_id"] for m in before]
    assert control.balances(trader.address)["pusd"] == "0"


def test_request_tally_counts_each_endpoint_per_second(sandbox_venue, control):
    token = control.market(index=0)["token_ids"][0]
    control.call("DELETE", "/requests", expect=200)
    started = time.time()
    for _ in range(3):
        assert httpx.get(f"{sandbox_venue.clob_url}/book", params={"token_id": token}
                         ).status_code == 200
    httpx.get(f"{sandbox_venue.data_url}/activity", params={"user": "0x" + "ab" * 20})
    httpx.get(f"{sandbox_venue.data_url}/activity", params={"user": "0x" + "cd" * 20})
    tally = control.call("GET", "/requests", expect=200)
    # Keyed by the route's rule, whatever the query; control calls are not counted.
    assert {k: sum(v.values()) for k, v in tally.items()} == {
        "GET /clob/book": 3, "GET /data/activity": 2}
    assert all(int(second) >= int(started) for v in tally.values() for second in v)
    later = control.call("GET", f"/requests?since={int(time.time()) + 5}", expect=200)
    assert later == {}
    control.call("GET", "/requests?since=soon", expect=400)
    control.call("DELETE", "/requests", expect=200)
    assert control.call("GET", "/requests", expect=200) == {}
