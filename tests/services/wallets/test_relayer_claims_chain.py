"""Claims from a deposit wallet on the dev chain (issue 16, ACCOUNTS.md §6): the sandbox
relayer runs the wallet on anvil, so the product's claim job sends its WALLET batch and the
wallet contract itself executes ``redeemPositions`` on the CtfCollateralAdapter (binary) or
the NegRiskCtfCollateralAdapter (neg-risk): the winnings arrive as pUSD on chain, the
outcome tokens are gone, and the wallet and its owner never held POL."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from devstack.chain.devchain import DevCondition
from models.wallet import Claim
from services.trading import positions
from services.wallets import claims, onboarding, wallets
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


def holding_winners(cv: ChainVenue, user: Any, shares: int, *, outcome: int = 0,
                    neg_risk: bool = False) -> tuple[Any, str, DevCondition]:
    """The user's onboarded deposit wallet holding ``shares`` of ``outcome`` in a market
    (listed and catalogued) resolved to that outcome: (wallet, its maker, the condition)."""
    dev = cv.chain.contracts
    wallet = _onboarded(user)
    maker = wallets.maker(wallet)
    condition = dev.prepare_neg_risk_question() if neg_risk else dev.prepare_condition()
    catalogue_market(condition)
    dev.split_position(maker, condition, shares * USDC, outcomes=[outcome])
    if neg_risk:
        dev.resolve_neg_risk_question(condition.question_id, outcome == 0)
    else:
        dev.resolve_condition(condition.question_id, [int(outcome == 0), int(outcome == 1)])
    return wallet, maker, condition


def _no_pol(cv: ChainVenue, wallet: Any) -> None:
    dev = cv.chain.contracts
    assert dev.native_balance_wei(wallet.address) == 0
    assert dev.native_balance_wei(wallet.funder_address) == 0


def test_a_deposit_wallets_winnings_are_redeemed_on_chain_as_pusd(accounts_venue, user) -> None:
    cv, dev = accounts_venue, accounts_venue.chain.contracts
    wallet, maker, condition = holding_winners(cv, user, 7)  # 7 Yes, Yes won

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
        accounts_venue, user) -> None:
    cv, dev = accounts_venue, accounts_venue.chain.contracts
    wallet, maker, _question = holding_winners(cv, user, 4, neg_risk=True)

    before = _pusd(cv, maker)
    [row] = claims.request(user)
    assert row.neg_risk and row.payout == Decimal(4)
    assert claims.redeem(row.id) == "confirmed"
    [call] = json.loads(Claim.get_by_id(row.id).relayer_payload)[
        "depositWalletParams"]["calls"]
    assert call["target"].lower() == dev.neg_risk_collateral_adapter.lower()
    assert _pusd(cv, maker) - before == 4 * USDC
    _no_pol(cv, wallet)


def test_positions_value_what_the_maker_can_claim(accounts_venue, user) -> None:
    """``claimable_value`` is what the deposit wallet (the maker) holds on chain, not its
    owner EOA (which holds nothing)."""
    _wallet, _maker, condition = holding_winners(accounts_venue, user, 3, outcome=1)  # No won
    [shown] = positions.list_positions(user)
    assert shown["token_id"] == str(condition.token_ids[1])
    assert (shown["resolved"], shown["claimable_value"]) == (True, Decimal(3))
