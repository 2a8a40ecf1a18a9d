"""Markets the sandbox resolves pay on the dev chain (issue 43, item 2): resolving a market
through the control API (or by its schedule) reports its payouts where its tokens live (the
CTF as the condition's oracle, the NegRiskAdapter for a neg-risk question, the Router for a
protocol-v2 market), so a claim from the deposit wallet pays real pUSD through the relayer.
Before, the sandbox resolved its own ledger only: Positions offered the claim and the chain
answered "nothing to claim"."""

from __future__ import annotations

import secrets
import time
from decimal import Decimal
from typing import Any

from chain.tokens import token_balance_base
from devstack.ctf import position_id
from services.wallets import claims, wallets
from tests.chain_venue import ChainVenue
from tests.conftest import DEADLINE
from tests.services.wallets.test_relayer_claims_chain import _onboarded
from tests.wallet_fixtures import USDC


def _sandbox_market(cv: ChainVenue, **fields: Any) -> dict:
    """A market the sandbox lists itself (no house quotes): its control summary."""
    slug = f"lives-{secrets.token_hex(4)}"
    cv.control.call("POST", "/markets", {"slug": slug, "question": f"Will {slug} pay?",
                                         "liquidity": False, **fields}, expect=201)
    return next(m for m in cv.control.state()["markets"] if m["slug"] == slug)


def _held(cv: ChainVenue, maker: str, token_id: str, shares: int) -> None:
    """``maker`` holds ``shares`` of the token on chain (the venue provisions them there)."""
    cv.control.call("POST", "/fund", {"address": maker, "token_id": token_id,
                                      "shares": str(shares), "seen": True}, expect=200)


def _holding(cv: ChainVenue, user: Any, shares: int, outcomes: tuple[int, ...] = (0,),
             **fields: Any) -> tuple[str, dict]:
    """The user's deposit wallet holding ``shares`` of the chosen outcomes of a new sandbox
    market (``fields`` as POST /_sandbox/markets takes them): (its maker, its summary)."""
    maker = wallets.maker(_onboarded(user))
    market = _sandbox_market(cv, **fields)
    for outcome in outcomes:
        _held(cv, maker, market["token_ids"][outcome], shares)
    return maker, market


def _claimed(cv: ChainVenue, user: Any, maker: str, payout: int) -> None:
    """One claim of the user's, redeemed through the relayer, pays exactly ``payout`` pUSD
    base units into the deposit wallet."""
    dev = cv.chain.contracts
    before = token_balance_base(dev.web3(), dev.pusd, maker)
    [row] = claims.request(user)
    assert row.payout * USDC == payout
    assert claims.redeem(row.id) == "confirmed"
    assert token_balance_base(dev.web3(), dev.pusd, maker) - before == payout
    assert claims.request(user) == []


def test_a_sandbox_resolution_pays_a_binary_claim_in_pusd(accounts_venue, user) -> None:
    cv = accounts_venue
    maker, market = _holding(cv, user, 7)
    yes, _no = market["token_ids"]

    cv.control.call("POST", f"/markets/{market['condition_id']}/resolve", {"winner": "Yes"},
                    expect=200)
    [held] = claims.maker_claimable(_onboarded(user))
    assert (held.token_id, held.claimable_value) == (yes, Decimal(7))
    # the chain's payouts never change: the venue keeps to them
    refused = cv.control.call("POST", f"/markets/{market['condition_id']}/resolve",
                              {"winner": "No"}, expect=409)
    assert "never change" in refused["error"]
    _claimed(cv, user, maker, 7 * USDC)


def test_a_sandbox_resolution_pays_a_neg_risk_claim_through_the_adapter(
        accounts_venue, user) -> None:
    """The venue's own neg-risk questions are the dev NegRiskAdapter's (prepared there as its
    admin, tokens split from its wrapped collateral), as on Polygon; No wins here."""
    cv = accounts_venue
    dev = cv.chain.contracts
    maker, market = _holding(cv, user, 4, (1,), neg_risk=True)
    # split from the adapter's wrapped collateral, as Polymarket's neg-risk tokens are
    assert market["token_ids"][1] == str(position_id(dev.wrapped_collateral,
                                                     market["condition_id"], 2))

    cv.control.call("POST", f"/markets/{market['condition_id']}/resolve", {"winner": "No"},
                    expect=200)
    [held] = claims.maker_claimable(_onboarded(user))
    assert held.neg_risk and held.claimable_value == Decimal(4)
    _claimed(cv, user, maker, 4 * USDC)


def test_a_sandbox_resolution_pays_a_v2_claim_through_the_router(accounts_venue,
                                                                  user) -> None:
    cv = accounts_venue
    dev = cv.chain.contracts
    maker = wallets.maker(_onboarded(user))
    market = _sandbox_market(cv, position_ids=True)
    yes, no = market["token_ids"]
    dev.split_v2_position(maker, [yes, no], 5 * USDC, outcomes=[0])
    _held(cv, maker, yes, 5)  # the venue's index of it

    cv.control.call("POST", f"/markets/{market['condition_id']}/resolve", {}, expect=200)
    assert cv.control.market(market["slug"])["winner"] == 0  # the leading one (at 0.5)
    _claimed(cv, user, maker, 5 * USDC)


def test_a_scheduled_market_ends_by_itself_and_pays(accounts_venue, user) -> None:
    cv = accounts_venue
    maker, market = _holding(cv, user, 3, (0, 1))  # whichever wins, 3 pUSD are due

    cv.control.call("POST", "/lifespans", {"lifetime": 2, "replenish": False}, expect=200)
    deadline = time.monotonic() + DEADLINE
    while not (ended := cv.control.market(market["slug"]))["closed"]:
        assert time.monotonic() < deadline, "the market never ended"
        time.sleep(0.2)
    cv.control.call("POST", "/lifespans", {"lifetime": 0}, expect=200)
    assert ended["winner"] in (0, 1)
    _claimed(cv, user, maker, 3 * USDC)
