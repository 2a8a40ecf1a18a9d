"""Protocol-v2 positions over the sandbox (ACCOUNTS.md §11, issue 33 item 2): a market's
``version`` picks its trading ids (``positionIds`` for v2, ``clobTokenIds`` for v1) for the
catalogue, books and orders; balance-allowance reads name ``CONDITIONAL-V2`` for a position
(``CONDITIONAL`` for a CTF token), and the venue refuses the other one."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from models.market import MarketToken
from services.markets import markets
from services.platform import venues
from services.wallets import venue_accounts
from tests.http_helpers import json_body
from venue.errors import VenueError


def _gamma(venue_control: Any, slug: str) -> dict:
    [row] = venue_control.get("/gamma/markets", slug=slug)
    return row


def test_a_v2_market_trades_by_its_position_ids(bound_db, venue_control, make_sandbox_market):
    market = make_sandbox_market(position_ids=True)
    row = _gamma(venue_control, market.slug)
    # Gamma lists both id sets; only the version's have books
    assert row["version"] == "v2" and row["positionIds"] == market.token_ids
    legacy = json.loads(row["clobTokenIds"])
    assert set(legacy).isdisjoint(market.token_ids)
    page = markets.market_page(market.slug)
    assert [b["token_id"] for b in page["books"]] == market.token_ids
    assert all(b["depth"] is not None for b in page["books"])  # the house quotes both
    stored = {t.token_id for t in MarketToken.select().where(
        MarketToken.token_id.in_(market.token_ids + legacy))}
    assert stored == set(market.token_ids)


def test_a_v1_market_keeps_its_clob_token_ids(bound_db, venue_control, market):
    row = _gamma(venue_control, market.slug)
    assert row["version"] == "v1" and json.loads(row["clobTokenIds"]) == market.token_ids
    assert len(row["positionIds"]) == 2 and set(row["positionIds"]).isdisjoint(
        market.token_ids)  # listed, as the samples do, but not traded
    page = markets.market_page(market.slug)
    assert [b["token_id"] for b in page["books"]] == market.token_ids


@pytest.mark.parametrize("position_ids", [True, False], ids=["v2", "v1"])
def test_shares_the_clob_has_not_seen_are_sold_after_a_refresh_of_their_asset_type(
        client, auth_headers, user, make_trader, make_sandbox_market, venue_control,
        position_ids: bool) -> None:
    """Shares that reached the wallet outside the CLOB: the strict venue refuses their sale
    until ``/balance-allowance/update`` names them with the right asset type."""
    me = make_trader(user=user)
    market = make_sandbox_market(position_ids=position_ids)
    venue_control.grant(me.maker, market.yes, "10", seen=False)
    acct = venue_accounts.account(user)
    assert venue_accounts.outcome_balance(acct, market.yes) == 0  # the cache's view
    body = {"token_id": market.yes, "side": "sell", "size": "10", "order_type": "market"}
    quote = client.post("/api/markets/order/preview", json=body, headers=auth_headers)
    assert quote.status_code == 200, quote.get_data(as_text=True)
    placed = client.post("/api/markets/order", headers=auth_headers,
                         json={**body, "preview_id": json_body(quote)["preview_id"]})
    assert placed.status_code == 200, placed.get_data(as_text=True)
    assert json_body(placed)["status"] == "filled", json_body(placed)
    assert venue_accounts.outcome_balance(acct, market.yes) == 0  # sold


@pytest.mark.parametrize("position_ids", [True, False], ids=["v2", "v1"])
def test_the_venue_refuses_the_other_asset_type(bound_db, user, make_trader,
                                                make_sandbox_market, position_ids: bool):
    me = make_trader(user=user)
    market = make_sandbox_market(position_ids=position_ids)
    acct = venue_accounts.account(me.user)
    clob = venues.client().clob
    right, wrong = (("CONDITIONAL-V2", "CONDITIONAL") if position_ids
                    else ("CONDITIONAL", "CONDITIONAL-V2"))
    assert clob.balance_allowance(acct.creds, asset_type=right, token_id=market.yes,
                                  signature_type=acct.signature_type) == 0
    with pytest.raises(VenueError, match=f"its asset_type is {right}"):
        clob.balance_allowance(acct.creds, asset_type=wrong, token_id=market.yes,
                               signature_type=acct.signature_type)
    with pytest.raises(VenueError, match="valid tokenId"):
        clob.update_balance_allowance(acct.creds, asset_type=right,
                                      signature_type=acct.signature_type)


def test_the_copyability_replay_and_the_chain_source_read_a_v2_market_by_position_ids(
        bound_db, venue_control, make_sandbox_market, fresh_venue_cache):
    """A target's fill in a v2 market names a position id: the replay finds its outcome, its
    payout once resolved and the other outcome (an inverse copy's), and the chain source
    labels the fill's outcome, from ``positionIds`` and not the unbooked ``clobTokenIds``."""
    import time

    from chain.exchange_events import ExchangeFill
    from services.copying import copyability_reports
    from worker.copy_engine.chain_source import activity_item

    market = make_sandbox_market(position_ids=True)
    yes, no = market.token_ids
    venue_control.call("POST", f"/markets/{market.condition_id}/resolve", {"winner": 0},
                       expect=200)
    now = int(time.time())
    facts = copyability_reports._token_facts(no, now - 3600, now)
    assert facts.other_token_id == yes
    assert facts.mark == Decimal(0)  # resolved: the losing outcome pays nothing
    gamma = venues.client().gamma.market_by_token(no)
    fill = ExchangeFill(tx_hash="0x" + "ab" * 32, exchange="0x" + "11" * 20,
                        maker="0x" + "22" * 20, side="BUY", token_id=no, shares=10_000_000,
                        usdc=5_000_000, fee=0)
    item = activity_item(fill, gamma, now)
    assert (item.outcome, item.outcome_index) == (market.outcomes[1], 1)
