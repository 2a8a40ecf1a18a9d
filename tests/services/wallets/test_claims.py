"""Claims against anvil: resolved plain-CTF and neg-risk positions redeem into collateral."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chain.abi import CONDITIONAL_TOKENS, load_abi
from chain.tokens import outcome_balances_base, token_balance_base
from chain.transactions import next_nonce
from models.wallet import Claim, WalletTransaction
from services.platform import errors
from services.wallets import claims
from tests.wallet_fixtures import (
    USDC,
    catalogue_market,
    chain_settings,
    faulty_web3,
    neg_risk_holding,
    use_chain,
    wallet_with_position,
)


def test_claim_after_resolution_pays_collateral(wallet_chain, user) -> None:
    dev, w3 = wallet_chain.contracts, wallet_chain.web3()
    condition = dev.prepare_condition()
    slug = catalogue_market(condition)
    wallet = wallet_with_position(wallet_chain, user, condition, 4 * USDC, outcomes=[0])
    # unresolved: nothing to claim, and the claim action says so
    assert claims.claimable_positions(wallet.address) == []
    assert claims.claim(user, wait_seconds=0)["claims"] == []

    dev.resolve_condition(condition.question_id, [1, 0])
    [position] = claims.claimable_positions(wallet.address)
    assert position.token_id == str(condition.token_ids[0]) and position.market_slug == slug
    assert (position.size, position.payout_fraction, position.claimable_value) == (
        Decimal(4), Decimal(1), Decimal(4))
    assert position.collateral == dev.usdce and not position.neg_risk
    assert claims.claimable_value(wallet.address, str(condition.token_ids[0])) == Decimal(4)

    [claim] = claims.request(user)
    assert claim.status == "queued" and claim.expected_payout == Decimal(4)
    before = token_balance_base(w3, dev.usdce, wallet.address)
    assert claims.redeem(claim.id) == "confirmed"
    assert token_balance_base(w3, dev.usdce, wallet.address) == before + 4 * USDC
    assert set(outcome_balances_base(w3, dev.ctf, wallet.address,
                                     condition.token_ids).values()) == {0}
    done = claims.describe(Claim.get_by_id(claim.id))
    assert done["status"] == "confirmed" and done["tx_hash"] and done["block_number"]
    # redeemed: nothing left to claim; running the job again changes nothing
    assert claims.claimable_positions(wallet.address) == []
    assert claims.redeem(claim.id) == "confirmed"
    assert token_balance_base(w3, dev.usdce, wallet.address) == before + 4 * USDC


def test_pusd_backed_split_payout(wallet_chain, user) -> None:
    dev, w3 = wallet_chain.contracts, wallet_chain.web3()
    condition = dev.prepare_condition(collateral=dev.pusd)
    catalogue_market(condition)
    wallet = wallet_with_position(wallet_chain, user, condition, 3 * USDC)
    dev.resolve_condition(condition.question_id, [1, 1])
    positions = claims.claimable_positions(wallet.address)
    assert [p.claimable_value for p in positions] == [Decimal("1.5"), Decimal("1.5")]
    [claim] = claims.request(user)
    assert claim.collateral == dev.pusd
    assert claims.redeem(claim.id) == "confirmed"
    assert token_balance_base(w3, dev.pusd, wallet.address) == 3 * USDC


def test_neg_risk_claim_approves_the_adapter_then_redeems(wallet_chain, user) -> None:
    dev, w3 = wallet_chain.contracts, wallet_chain.web3()
    wallet, question, sibling = neg_risk_holding(wallet_chain, user, catalogue_market)
    dev.resolve_neg_risk_question(question.question_id, True)

    [position] = claims.claimable_positions(wallet.address)  # the sibling is unresolved
    assert position.neg_risk and position.claimable_value == Decimal(5)
    # the current NegRiskCtfCollateralAdapter pays pUSD (the v1 NegRiskAdapter, deprecated
    # and refused by the relayer since 2026-07-17, paid USDC.e; ACCOUNTS.md §5, §11)
    assert position.collateral == dev.pusd
    pusd_before = token_balance_base(w3, dev.pusd, wallet.address)
    [claim] = claims.request(user)
    assert claims.redeem(claim.id) == "confirmed"
    assert token_balance_base(w3, dev.pusd, wallet.address) - pusd_before == 5 * USDC
    assert token_balance_base(w3, dev.usdce, wallet.address) == 0
    stored = Claim.get_by_id(claim.id)
    assert stored.approval_transaction.status == "confirmed"
    ctf = w3.eth.contract(address=dev.ctf, abi=load_abi(CONDITIONAL_TOKENS))
    assert ctf.functions.isApprovedForAll(wallet.address,
                                          dev.neg_risk_collateral_adapter).call()
    assert not ctf.functions.isApprovedForAll(wallet.address, dev.neg_risk_adapter).call()
    assert (stored.approval_transaction.nonce, stored.transaction.nonce) == (0, 1)
    held = outcome_balances_base(w3, dev.ctf, wallet.address, sibling.token_ids)
    assert held[sibling.token_ids[1]] == 1 * USDC  # untouched

    # a second neg-risk claim needs no new approval
    dev.resolve_neg_risk_question(sibling.question_id, False)
    [second] = claims.request(user, [str(sibling.token_ids[1])])
    assert claims.redeem(second.id) == "confirmed"
    assert Claim.get_by_id(second.id).approval_transaction_id is None
    assert token_balance_base(w3, dev.pusd, wallet.address) - pusd_before == 6 * USDC


def test_token_ids_restrict_the_claim(wallet_chain, user) -> None:
    dev = wallet_chain.contracts
    first, second = dev.prepare_condition(), dev.prepare_condition()
    catalogue_market(first)
    catalogue_market(second)
    wallet = wallet_with_position(wallet_chain, user, first, 1 * USDC, outcomes=[0])
    dev.split_position(wallet.address, second, 2 * USDC, outcomes=[1])
    dev.resolve_condition(first.question_id, [1, 0])
    dev.resolve_condition(second.question_id, [0, 1])
    [claim] = claims.request(user, [str(second.token_ids[1])])
    assert claim.condition_id == second.condition_id
    assert claims.request(user, ["12345"]) == []  # unknown token: nothing to claim
    # claiming again while the first is open returns it, not a second claim
    [again] = claims.request(user, [str(second.token_ids[1])])
    assert again.id == claim.id
    assert Claim.select().count() == 1


def test_losing_positions_are_not_submitted(wallet_chain, user) -> None:
    dev = wallet_chain.contracts
    condition = dev.prepare_condition()
    catalogue_market(condition)
    wallet = wallet_with_position(wallet_chain, user, condition, 2 * USDC, outcomes=[0])
    dev.resolve_condition(condition.question_id, [0, 1])
    [position] = claims.claimable_positions(wallet.address)
    assert position.claimable_value == 0
    assert claims.request(user) == []


def test_no_gas_is_402_and_records_nothing(wallet_chain, user) -> None:
    dev = wallet_chain.contracts
    condition = dev.prepare_condition()
    catalogue_market(condition)
    wallet = wallet_with_position(wallet_chain, user, condition, 1 * USDC)
    dev.fund_native(wallet.address, 0)
    dev.resolve_condition(condition.question_id, [1, 0])
    with pytest.raises(errors.InsufficientBalance, match="MATIC") as caught:
        claims.request(user)
    assert caught.value.status == 402 and caught.value.code == "insufficient_balance"
    assert Claim.select().count() == 0


def test_neg_risk_without_gas_is_402(wallet_chain, user) -> None:
    dev = wallet_chain.contracts
    question = dev.prepare_neg_risk_question()
    catalogue_market(question)
    wallet = wallet_with_position(wallet_chain, user, question, 1 * USDC, outcomes=[0])
    dev.fund_native(wallet.address, 0)
    dev.resolve_neg_risk_question(question.question_id, True)
    with pytest.raises(errors.InsufficientBalance):
        claims.request(user)


def test_rerun_after_a_crash_during_broadcast_redeems_once(app, wallet_chain, user) -> None:
    dev, w3 = wallet_chain.contracts, wallet_chain.web3()
    condition = dev.prepare_condition()
    catalogue_market(condition)
    wallet = wallet_with_position(wallet_chain, user, condition, 2 * USDC, outcomes=[0])
    dev.resolve_condition(condition.question_id, [1, 0])
    [claim] = claims.request(user)
    use_chain(chain_settings(app, wallet_chain),
                           web3=faulty_web3(wallet_chain.rpc_url, fail_send="after"))
    with pytest.raises(Exception, match="injected"):
        claims.redeem(claim.id)
    assert Claim.get_by_id(claim.id).status == "signed"
    use_chain(chain_settings(app, wallet_chain))
    assert claims.redeem(claim.id) == "confirmed"
    assert token_balance_base(w3, dev.usdce, wallet.address) == 2 * USDC
    assert WalletTransaction.select().where(WalletTransaction.wallet == wallet.id).count() == 1
    assert next_nonce(w3, wallet.address) == 1
