"""Data API v2 position statuses (ACCOUNTS.md §12) on REST and the dashboard, against the
sandbox: a status we do not know never fails a read and is shown as the venue wrote it; a
REDEEMABLE_LOST position is never offered for a claim (positions, claim banner, claimable
list); a MERGEABLE one shows what merging its complete sets returns."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from services.wallets import claims
from tests.dashboard.test_login_binding import _sign_in_with_code

UNKNOWN = "FROZEN_FOR_REVIEW"


def _positions(client: Any, headers: dict[str, str]) -> dict[str, dict[str, Any]]:
    response = client.get("/api/positions", headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    rows = json.loads(response.get_data(as_text=True), parse_float=Decimal)
    return {row["token_id"]: row for row in rows}


@pytest.fixture
def holder(make_trader, user, venue_control, make_sandbox_market, fresh_venue_cache):
    """The signed-in user's deposit wallet holding 5 Yes and 3 No shares of one market."""
    trader = make_trader("10", user=user)
    market = make_sandbox_market()
    venue_control.grant(trader.maker, market.yes, "5")
    venue_control.grant(trader.maker, market.no, "3")
    return trader, market


@pytest.fixture
def unknown_status(venue_control) -> Iterator[None]:
    """Every /v2/positions row of the shared sandbox reports a status no client knows."""
    venue_control.call("POST", "/list-rules", {"position_status": UNKNOWN}, expect=200)
    try:
        yield
    finally:
        venue_control.call("POST", "/list-rules", {"position_status": None}, expect=200)


def test_mergeable_positions_show_what_merging_returns(client, auth_headers, inbox, holder):
    trader, market = holder
    rows = _positions(client, auth_headers)
    assert [(rows[t]["status"], rows[t]["merge_value"]) for t in (market.yes, market.no)] == [
        ("MERGEABLE", "3"), ("MERGEABLE", "3")]  # 3 complete sets, 1 pUSD each
    _sign_in_with_code(client, inbox, trader.user.email)
    html = client.get("/dashboard/positions/live").get_data(as_text=True)
    assert html.count("Merging returns 3.00 pUSD") == 2
    assert html.count('data-status="MERGEABLE"') == 2


def test_an_unknown_status_never_fails_a_read_and_is_shown_as_it_is(
        client, auth_headers, inbox, holder, unknown_status):
    trader, market = holder
    rows = _positions(client, auth_headers)
    assert {rows[t]["status"] for t in (market.yes, market.no)} == {UNKNOWN}
    assert rows[market.yes]["size"] == "5" and rows[market.yes]["merge_value"] is None
    _sign_in_with_code(client, inbox, trader.user.email)
    html = client.get("/dashboard/positions/live").get_data(as_text=True)
    assert html.count(f'data-status="{UNKNOWN}">frozen for review</span>') == 2


def test_a_lost_position_is_never_offered_for_a_claim(client, auth_headers, inbox, holder,
                                                      venue_control):
    trader, market = holder
    venue_control.call("POST", f"/markets/{market.condition_id}/resolve", {"winner": 0},
                       expect=200)
    rows = _positions(client, auth_headers)
    won, lost = rows[market.yes], rows[market.no]
    assert (won["status"], won["claimable_value"]) == ("REDEEMABLE", "5")
    assert (lost["status"], lost["resolved"], lost["claimable_value"]) == (
        "REDEEMABLE_LOST", True, "0")
    # the claimable list (and so the claim it drafts) names the winner only
    assert [p.token_id for p in claims.wallet_claimable(trader.wallet)] == [market.yes]
    _sign_in_with_code(client, inbox, trader.user.email)
    html = client.get("/dashboard/positions/live").get_data(as_text=True)
    assert "1 resolved position can be claimed." in html
    assert html.count("<button type=\"submit\">Claim ") == 1
    assert 'data-status="REDEEMABLE_LOST">redeemable lost</span>' in html
    listed = client.get("/dashboard/wallet/claimable",
                        headers={"HX-Request": "true"}).get_data(as_text=True)
    assert market.yes in listed and market.no not in listed


def test_a_wallet_holding_only_losers_has_nothing_to_claim(client, inbox, make_trader, user,
                                                           venue_control, make_sandbox_market,
                                                           fresh_venue_cache):
    trader = make_trader("10", user=user)
    market = make_sandbox_market()
    venue_control.grant(trader.maker, market.no, "4")
    venue_control.call("POST", f"/markets/{market.condition_id}/resolve", {"winner": 0},
                       expect=200)
    assert claims.wallet_claimable(trader.wallet) == []
    assert claims.sweep_available([trader.wallet]) == 0
    # v2 refused: the v1 rows (no status) stand for the same, a redeemable one priced 0 lost
    venue_control.call("POST", "/faults", {"path": "/data/v2/positions", "count": 100,
                                           "status": 404}, expect=201)
    try:
        assert claims.wallet_claimable(trader.wallet) == []
    finally:
        venue_control.call("DELETE", "/faults", expect=200)
    _sign_in_with_code(client, inbox, user.email)
    listed = client.get("/dashboard/wallet/claimable",
                        headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "Nothing to claim" in listed


def test_a_trader_profile_shows_its_positions_statuses(client, auth_headers, venue_control,
                                                       make_sandbox_market, fresh_venue_cache):
    wallet = "0x" + secrets.token_hex(20)
    won, lost = make_sandbox_market(), make_sandbox_market()
    venue_control.grant(wallet, won.yes, "6")
    venue_control.grant(wallet, lost.no, "2")
    for market in (won, lost):
        venue_control.call("POST", f"/markets/{market.condition_id}/resolve", {"winner": 0},
                           expect=200)
    response = client.get(f"/api/traders/{wallet}", headers=auth_headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    shown = {p["token_id"]: p["status"] for p in response.get_json()["positions"]}
    assert shown == {won.yes: "REDEEMABLE", lost.no: "REDEEMABLE_LOST"}
