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


def _confirmed_payouts(user: Any, condition_id: str) -> Decimal:
    """What the app books for the user's confirmed claims of one market."""
    return sum((row.payout for row in Claim.select().where(
        (Claim.user == user.id) & (Claim.condition_id == condition_id)
        & (Claim.status == "confirmed"))), Decimal(0))


def test_a_claim_asked_while_the_last_one_confirms_claims_nothing_twice(
        accounts_venue, user, monkeypatch) -> None:
    # the soak's case: a second claim read the held balances just before the first claim's
    # redemption mined, and only then found no open claim of the market
    cv = accounts_venue
    _wallet, maker, condition = holding_winners(cv, user, 7)
    [first] = claims.request(user)
    real_held = claims._held

    def read_then_the_first_confirms(w3: Any, owner: str, tokens: Any) -> dict[int, int]:
        balances = real_held(w3, owner, tokens)  # before the first claim's redemption
        monkeypatch.setattr(claims, "_held", real_held)
        assert claims.redeem(first.id) == "confirmed"
        return balances

    before = _pusd(cv, maker)
    monkeypatch.setattr(claims, "_held", read_then_the_first_confirms)
    assert claims.request(user) == []
    assert _pusd(cv, maker) - before == 7 * USDC
    assert Claim.select().where(Claim.user == user.id).count() == 1
    assert _confirmed_payouts(user, condition.condition_id) == Decimal(7)


def test_winnings_arriving_after_a_confirmed_claim_are_claimed_at_what_is_held_now(
        accounts_venue, user) -> None:
    cv, dev = accounts_venue, accounts_venue.chain.contracts
    _wallet, maker, condition = holding_winners(cv, user, 7)
    [first] = claims.request(user)
    assert claims.redeem(first.id) == "confirmed"
    dev.split_position(maker, condition, 3 * USDC, outcomes=[0])  # 3 more Yes arrive

    [second] = claims.request(user)
    assert second.id != first.id and second.payout == Decimal(3)
    assert json.loads(second.amounts) == [str(3 * USDC)]
    before = _pusd(cv, maker)
    assert claims.redeem(second.id) == "confirmed"
    assert _pusd(cv, maker) - before == 3 * USDC
    assert _confirmed_payouts(user, condition.condition_id) == Decimal(10)


def test_a_confirmed_claim_books_what_the_chain_paid_and_a_duplicate_books_nothing(
        accounts_venue, user) -> None:
    cv = accounts_venue
    _wallet, maker, condition = holding_winners(cv, user, 7)
    [first] = claims.request(user)
    # a second claim of the same tokens, as one drafted from a read before the first mined
    twin = Claim.create(**{name: getattr(first, name) for name in (
        "user", "wallet", "condition_id", "neg_risk", "market_slug", "token_ids", "amounts",
        "collateral", "expected_payout", "status")})
    before = _pusd(cv, maker)
    assert claims.redeem(first.id) == "confirmed"
    assert claims.redeem(twin.id) == "confirmed"  # redeeming nothing still runs on chain
    assert _pusd(cv, maker) - before == 7 * USDC
    assert Claim.get_by_id(first.id).payout == Decimal(7)
    assert Claim.get_by_id(twin.id).payout == Decimal(0)
    assert _confirmed_payouts(user, condition.condition_id) == Decimal(7)
