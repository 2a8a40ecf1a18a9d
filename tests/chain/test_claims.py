"""Claims: resolved CTF and neg-risk positions redeem into collateral."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chain.errors import TransactionRejected
from chain.tokens import outcome_balances_base, payout_fractions, token_balance_base
from chain.transactions import (
    build_ctf_approval,
    build_ctf_redeem,
    build_neg_risk_redeem,
    next_nonce,
    send_raw,
    wait_receipt,
)


def _send(w3, tx) -> None:
    send_raw(w3, tx.raw)
    assert wait_receipt(w3, tx.tx_hash, timeout=10).succeeded


def test_prepare_split_resolve_redeem(chain) -> None:
    w3, dev = chain.web3(), chain.contracts
    condition = dev.prepare_condition()
    wallet = chain.new_wallet()
    dev.split_position(wallet.address, condition, 4_000_000)
    assert outcome_balances_base(w3, dev.ctf, wallet.address, condition.token_ids) == {
        condition.token_ids[0]: 4_000_000,
        condition.token_ids[1]: 4_000_000,
    }
    assert payout_fractions(w3, dev.ctf, condition.condition_id) is None

    # redeeming before resolution would revert, so it is refused when built
    with pytest.raises(TransactionRejected, match="not received yet"):
        build_ctf_redeem(
            w3, private_key=wallet.private_key, ctf=dev.ctf, collateral=dev.usdce,
            condition_id=condition.condition_id, index_sets=[1, 2],
            nonce=next_nonce(w3, wallet.address),
        )  # fmt: skip

    dev.resolve_condition(condition.question_id, [1, 0])
    assert payout_fractions(w3, dev.ctf, condition.condition_id) == [Decimal(1), Decimal(0)]
    before = token_balance_base(w3, dev.usdce, wallet.address)
    tx = build_ctf_redeem(
        w3, private_key=wallet.private_key, ctf=dev.ctf, collateral=dev.usdce,
        condition_id=condition.condition_id, index_sets=[1, 2],
        nonce=next_nonce(w3, wallet.address),
    )  # fmt: skip
    _send(w3, tx)
    assert token_balance_base(w3, dev.usdce, wallet.address) == before + 4_000_000
    left = outcome_balances_base(w3, dev.ctf, wallet.address, condition.token_ids)
    assert set(left.values()) == {0}


def test_split_payouts_pay_pro_rata_on_pusd_collateral(chain) -> None:
    w3, dev = chain.web3(), chain.contracts
    condition = dev.prepare_condition(outcome_slot_count=2, collateral=dev.pusd)
    wallet = chain.new_wallet()
    dev.split_position(wallet.address, condition, 3_000_000, outcomes=[1])
    dev.resolve_condition(condition.question_id, [1, 1])
    assert payout_fractions(w3, dev.ctf, condition.condition_id) == [
        Decimal("0.5"),
        Decimal("0.5"),
    ]
    tx = build_ctf_redeem(
        w3, private_key=wallet.private_key, ctf=dev.ctf, collateral=dev.pusd,
        condition_id=condition.condition_id, index_sets=[1, 2],
        nonce=next_nonce(w3, wallet.address),
    )  # fmt: skip
    _send(w3, tx)
    assert token_balance_base(w3, dev.pusd, wallet.address) == 1_500_000


def test_losing_positions_redeem_to_nothing(chain) -> None:
    w3, dev = chain.web3(), chain.contracts
    condition = dev.prepare_condition()
    wallet = chain.new_wallet()
    dev.split_position(wallet.address, condition, 2_000_000, outcomes=[0])
    dev.resolve_condition(condition.question_id, [0, 1])
    tx = build_ctf_redeem(
        w3, private_key=wallet.private_key, ctf=dev.ctf, collateral=dev.usdce,
        condition_id=condition.condition_id, index_sets=[1, 2],
        nonce=next_nonce(w3, wallet.address),
    )  # fmt: skip
    _send(w3, tx)
    assert token_balance_base(w3, dev.usdce, wallet.address) == 0
    assert outcome_balances_base(w3, dev.ctf, wallet.address, condition.token_ids[:1]) == {
        condition.token_ids[0]: 0
    }


def test_neg_risk_adapter_redeem(chain) -> None:
    w3, dev = chain.web3(), chain.contracts
    question = dev.prepare_neg_risk_question()
    sibling = dev.prepare_neg_risk_question(question.market_id)
    assert question.neg_risk and question.collateral == dev.wrapped_collateral
    assert sibling.question_id[:-2] == question.question_id[:-2] != sibling.question_id

    wallet = chain.new_wallet()
    dev.split_position(wallet.address, question, 5_000_000, outcomes=[0])
    dev.split_position(wallet.address, sibling, 1_000_000, outcomes=[1])
    dev.resolve_neg_risk_question(question.question_id, True)
    assert payout_fractions(w3, dev.ctf, question.condition_id) == [Decimal(1), Decimal(0)]

    nonce = next_nonce(w3, wallet.address)
    # the adapter pulls the tokens, so the wallet approves it on the CTF first
    approval = build_ctf_approval(
        w3, private_key=wallet.private_key, ctf=dev.ctf, operator=dev.neg_risk_adapter,
        nonce=nonce,
    )  # fmt: skip
    _send(w3, approval)
    redeem = build_neg_risk_redeem(
        w3, private_key=wallet.private_key, adapter=dev.neg_risk_adapter,
        condition_id=question.condition_id, amounts=[5_000_000, 0], nonce=nonce + 1,
    )  # fmt: skip
    _send(w3, redeem)
    assert token_balance_base(w3, dev.usdce, wallet.address) == 5_000_000
    held = outcome_balances_base(
        w3, dev.ctf, wallet.address, question.token_ids + sibling.token_ids
    )
    assert held == {
        question.token_ids[0]: 0,
        question.token_ids[1]: 0,
        sibling.token_ids[0]: 0,
        sibling.token_ids[1]: 1_000_000,
    }


def test_neg_risk_redeem_without_approval_is_refused(chain) -> None:
    w3, dev = chain.web3(), chain.contracts
    question = dev.prepare_neg_risk_question()
    wallet = chain.new_wallet()
    dev.split_position(wallet.address, question, 1_000_000)
    dev.resolve_neg_risk_question(question.question_id, False)
    with pytest.raises(TransactionRejected, match="operator approval"):
        build_neg_risk_redeem(
            w3, private_key=wallet.private_key, adapter=dev.neg_risk_adapter,
            condition_id=question.condition_id, amounts=[1_000_000, 1_000_000],
            nonce=next_nonce(w3, wallet.address),
        )  # fmt: skip
