"""Claims find every redeemable position: the venue's Data API lists it, the chain decides.

Positions here arrive in the trading wallet from outside (an on-chain transfer from another
address, not a trade through the product), in markets the venue lists and our catalogue
has never seen.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from chain.tokens import outcome_balances_base, token_balance_base
from models.market import Market
from models.wallet import Claim
from services.trading import positions
from services.wallets import claims
from tests.wallet_fixtures import (
    USDC,
    catalogue_market,
    list_on_venue,
    neg_risk_holding,
    sandbox_control,
    wallet_with_position,
)


def _resolve_plain(chain, condition, payouts) -> None:
    """The oracle reports on chain and the venue closes its market."""
    chain.contracts.resolve_condition(condition.question_id, payouts)
    winner = payouts.index(max(payouts))
    sandbox_control("POST", f"/markets/{condition.condition_id}/resolve", {"winner": winner})


def _catalogued(condition_id: str) -> Market | None:
    return Market.get_or_none(Market.condition_id == condition_id)


@pytest.mark.parametrize("by_token", [False, True], ids=["all", "token_ids"])
def test_outside_position_in_an_uncatalogued_market_is_claimed(wallet_chain, user,
                                                               by_token) -> None:
    dev, w3 = wallet_chain.contracts, wallet_chain.web3()
    condition = dev.prepare_condition()
    listed = list_on_venue(condition)
    wallet = wallet_with_position(wallet_chain, user, condition, 4 * USDC, [0])
    token_ids = [str(condition.token_ids[0])] if by_token else None
    # unresolved: the venue lists it as not redeemable, nothing to claim
    assert claims.claim(user, token_ids, wait_seconds=0)["claims"] == []

    _resolve_plain(wallet_chain, condition, [1, 0])
    assert _catalogued(condition.condition_id) is None or by_token
    [claim] = claims.request(user, token_ids)
    assert claim.condition_id == condition.condition_id
    assert claim.market_slug == listed["slug"] and claim.expected_payout == Decimal(4)
    market = _catalogued(condition.condition_id)  # fetched from Gamma and catalogued
    assert market is not None and market.slug == listed["slug"]
    # asked again while open: the same claim, never a second one
    [again] = claims.request(user, token_ids)
    assert again.id == claim.id and Claim.select().count() == 1

    before = token_balance_base(w3, dev.usdce, wallet.address)
    assert claims.redeem(claim.id) == "confirmed"
    assert token_balance_base(w3, dev.usdce, wallet.address) == before + 4 * USDC
    assert set(outcome_balances_base(w3, dev.ctf, wallet.address,
                                     condition.token_ids).values()) == {0}
    # redeemed: nothing left, whether the venue has caught up or not
    assert claims.request(user, token_ids) == []
    assert Claim.select().count() == 1


def test_positions_show_the_claimable_value_of_an_outside_position(wallet_chain, user) -> None:
    condition = wallet_chain.contracts.prepare_condition()
    list_on_venue(condition)
    wallet_with_position(wallet_chain, user, condition, 3 * USDC, [1])
    # reported on chain, not yet closed at the venue (whose price is still 0.5): the value
    # is the chain's payout, from the same computation as claims
    wallet_chain.contracts.resolve_condition(condition.question_id, [0, 1])
    token = str(condition.token_ids[1])
    [row] = [p for p in positions.list_positions(user) if p["token_id"] == token]
    assert row["size"] == Decimal(3) and row["current_price"] == Decimal("0.5")
    assert row["claimable_value"] == Decimal(3)
    [claim] = claims.request(user)
    assert claim.expected_payout == Decimal(3)


def test_neg_risk_outside_position_is_claimed(wallet_chain, user) -> None:
    dev, w3 = wallet_chain.contracts, wallet_chain.web3()
    wallet, question, sibling = neg_risk_holding(wallet_chain, user, list_on_venue)
    dev.resolve_neg_risk_question(question.question_id, True)

    [claim] = claims.request(user)  # the sibling is unresolved
    assert claim.neg_risk and claim.condition_id == question.condition_id
    assert claim.expected_payout == Decimal(5)
    pusd_before = token_balance_base(w3, dev.pusd, wallet.address)
    assert claims.redeem(claim.id) == "confirmed"
    # through the NegRiskCtfCollateralAdapter: pUSD (ACCOUNTS.md §6)
    assert token_balance_base(w3, dev.pusd, wallet.address) - pusd_before == 5 * USDC
    held = outcome_balances_base(w3, dev.ctf, wallet.address, sibling.token_ids)
    assert held[sibling.token_ids[1]] == 1 * USDC  # untouched


def test_data_api_down_falls_back_to_the_catalogue(wallet_chain, user) -> None:
    dev, w3 = wallet_chain.contracts, wallet_chain.web3()
    known, unknown = dev.prepare_condition(), dev.prepare_condition()
    catalogue_market(known)  # closed in our catalogue
    list_on_venue(unknown)
    wallet = wallet_with_position(wallet_chain, user, known, 2 * USDC, [0])
    dev.split_position(wallet.address, unknown, 1 * USDC, outcomes=[0])
    dev.resolve_condition(known.question_id, [1, 0])
    _resolve_plain(wallet_chain, unknown, [1, 0])

    sandbox_control("POST", "/faults", {"path": "/data/v2/positions", "count": 1000, "status": 503})
    try:
        [claim] = claims.request(user)
    finally:
        sandbox_control("DELETE", "/faults")
    assert claim.condition_id == known.condition_id  # the uncatalogued one waits
    assert claims.redeem(claim.id) == "confirmed"
    assert token_balance_base(w3, dev.usdce, wallet.address) == 2 * USDC
    # the Data API is back: the other one is found, the first is not claimed again
    [second] = claims.request(user)
    assert second.condition_id == unknown.condition_id
    assert Claim.select().count() == 2
