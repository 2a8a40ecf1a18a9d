"""Claims from a deposit wallet on the dev chain (issue 16, ACCOUNTS.md §6): the sandbox
relayer runs the wallet on anvil, so the product's claim job sends its WALLET batch and the
wallet contract itself executes ``redeemPositions`` on the CtfCollateralAdapter (binary) or
the NegRiskCtfCollateralAdapter (neg-risk): the winnings arrive as pUSD on chain, the
outcome tokens are gone, and the wallet and its owner never held POL."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from models.wallet import Claim
from services import claims, onboarding, positions, trading_accounts, wallets
from tests.chain_venue import ChainVenue
from tests.wallet_fixtures import USDC, catalogue_market

_BALANCE_OF = [{"type": "function", "name": "balanceOf", "stateMutability": "view",
                "inputs": [{"name": "a", "type": "address"}],
                "outputs": [{"name": "", "type": "uint256"}]}]


def _pusd(cv: ChainVenue, address: str) -> int:
    dev = cv.chain.contracts
    token = dev.web3().eth.contract(address=dev.pusd, abi=_BALANCE_OF)
    return int(token.functions.balanceOf(address).call())


def _onboarded(user: Any) -> Any:
    """The product's own deposit wallet, deployed and approved on anvil by onboarding."""
    wallet = wallets.get_or_create_deposit_wallet(user)
    row = onboarding.record(wallet)
    assert onboarding.run(row.id) == "ready", onboarding.status(user)["error"]
    return wallets.for_user(user)


def _no_pol(cv: ChainVenue, wallet: Any) -> None:
    dev = cv.chain.contracts
    assert dev.native_balance_wei(wallet.address) == 0
    assert dev.native_balance_wei(wallet.funder_address) == 0


def test_a_deposit_wallets_winnings_are_redeemed_on_chain_as_pusd(chain_venue, user) -> None:
    cv, dev = chain_venue, chain_venue.chain.contracts
    wallet = _onboarded(user)
    maker = trading_accounts.maker_of(wallet)
    condition = dev.prepare_condition()
    catalogue_market(condition)
    dev.split_position(maker, condition, 7 * USDC, outcomes=[0])  # 7 Yes
    dev.resolve_condition(condition.question_id, [1, 0])  # Yes wins

    [held] = claims.maker_claimable(wallet)
    assert (held.size, held.claimable_value) == (Decimal(7), Decimal(7))
    assert held.collateral == dev.pusd
    before = _pusd(cv, maker)
    [row] = claims.request(user)
    assert (row.condition_id, row.payout, row.neg_risk) == (condition.condition_id,
                                                            Decimal(7), False)
    assert claims.redeem(row.id) == "confirmed"
    done = Claim.get_by_id(row.id)
    [call] = json.loads(done.relayer_payload)["depositWalletParams"]["calls"]
    assert call["target"].lower() == dev.ctf_collateral_adapter.lower()
    assert _pusd(cv, maker) - before == 7 * USDC  # pUSD, not USDC.e
    assert claims.maker_claimable(wallet) == []  # the tokens are gone
    assert claims.request(user) == []
    assert claims.redeem(row.id) == "confirmed" and _pusd(cv, maker) - before == 7 * USDC
    _no_pol(cv, wallet)


def test_a_neg_risk_claim_redeems_through_the_neg_risk_collateral_adapter(
        chain_venue, user) -> None:
    cv, dev = chain_venue, chain_venue.chain.contracts
    wallet = _onboarded(user)
    maker = trading_accounts.maker_of(wallet)
    question = dev.prepare_neg_risk_question()
    catalogue_market(question)
    dev.split_position(maker, question, 4 * USDC, outcomes=[0])
    dev.resolve_neg_risk_question(question.question_id, True)

    before = _pusd(cv, maker)
    [row] = claims.request(user)
    assert row.neg_risk and row.payout == Decimal(4)
    assert claims.redeem(row.id) == "confirmed"
    [call] = json.loads(Claim.get_by_id(row.id).relayer_payload)[
        "depositWalletParams"]["calls"]
    assert call["target"].lower() == dev.neg_risk_collateral_adapter.lower()
    assert _pusd(cv, maker) - before == 4 * USDC
    _no_pol(cv, wallet)


def test_positions_value_what_the_maker_can_claim(chain_venue, user) -> None:
    """``claimable_value`` is what the deposit wallet (the maker) holds on chain, not its
    owner EOA (which holds nothing)."""
    dev = chain_venue.chain.contracts
    wallet = _onboarded(user)
    maker = trading_accounts.maker_of(wallet)
    condition = dev.prepare_condition()
    catalogue_market(condition)
    dev.split_position(maker, condition, 3 * USDC, outcomes=[1])  # 3 No
    dev.resolve_condition(condition.question_id, [0, 1])  # No wins
    [shown] = positions.list_positions(user)
    assert shown["token_id"] == str(condition.token_ids[1])
    assert (shown["resolved"], shown["claimable_value"]) == (True, Decimal(3))
