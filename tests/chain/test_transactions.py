"""Signed transactions: explicit nonces, hash-before-send, idempotent resend, gas checks."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chain.errors import InsufficientGas, NonceConflict, ReceiptTimeout, TransactionRejected
from chain.keys import generate_keypair
from chain.rpc import connect
from chain.tokens import native_balance_wei, token_balance, token_balance_base
from chain.transactions import (
    Fees,
    build_erc20_transfer,
    build_native_transfer,
    gas_needed,
    has_gas_for,
    lookup_receipt,
    next_nonce,
    require_gas_for,
    send_raw,
    sendable_native_wei,
    suggest_fees,
    wait_receipt,
)
from devstack.chain.devchain import start_anvil


def test_two_transfers_with_explicit_nonces_both_land(chain) -> None:
    w3 = chain.web3()
    sender, first, second = chain.new_wallet(), generate_keypair(), generate_keypair()
    chain.contracts.mint(chain.contracts.pusd, sender.address, 10_000_000)
    nonce = next_nonce(w3, sender.address)
    tx_a = build_erc20_transfer(
        w3, private_key=sender.private_key, token=chain.contracts.pusd, to=first.address,
        amount_base=1_000_000, nonce=nonce,
    )  # fmt: skip
    tx_b = build_erc20_transfer(
        w3, private_key=sender.private_key, token=chain.contracts.pusd, to=second.address,
        amount_base=2_500_000, nonce=nonce + 1,
    )  # fmt: skip
    assert tx_a.tx_hash != tx_b.tx_hash
    # the later nonce goes first: the node holds it until the gap is filled
    assert send_raw(w3, tx_b.raw) == tx_b.tx_hash
    assert send_raw(w3, tx_a.raw) == tx_a.tx_hash
    assert wait_receipt(w3, tx_a.tx_hash, timeout=10).succeeded
    assert wait_receipt(w3, tx_b.tx_hash, timeout=10).succeeded
    assert token_balance(w3, chain.contracts.pusd, first.address) == Decimal("1")
    assert token_balance(w3, chain.contracts.pusd, second.address) == Decimal("2.5")
    assert token_balance(w3, chain.contracts.pusd, sender.address) == Decimal("6.5")
    assert next_nonce(w3, sender.address) == nonce + 2


def test_sending_the_same_raw_twice_transfers_once(chain) -> None:
    w3 = chain.web3()
    sender, receiver = chain.new_wallet(), generate_keypair()
    chain.contracts.mint(chain.contracts.usdce, sender.address, 5_000_000)
    tx = build_erc20_transfer(
        w3, private_key=sender.private_key, token=chain.contracts.usdce, to=receiver.address,
        amount_base=3_000_000, nonce=next_nonce(w3, sender.address),
    )  # fmt: skip
    assert lookup_receipt(w3, tx.tx_hash) is None  # the hash is known before anything is sent
    assert send_raw(w3, tx.raw) == tx.tx_hash
    wait_receipt(w3, tx.tx_hash, timeout=10)
    # a retry after a crash re-sends the stored bytes: recognised, not executed again
    assert send_raw(w3, tx.raw_hex) == tx.tx_hash
    assert send_raw(w3, tx.raw) == tx.tx_hash
    assert token_balance_base(w3, chain.contracts.usdce, receiver.address) == 3_000_000
    assert token_balance_base(w3, chain.contracts.usdce, sender.address) == 2_000_000


def test_resend_while_pending_is_already_known() -> None:
    # with interval mining the second send reaches the node while the first is still pending
    with start_anvil(block_time=1) as node:
        w3 = connect(node.rpc_url)
        key, receiver = node.accounts[1].private_key, generate_keypair()
        tx = build_native_transfer(
            w3, private_key=key, to=receiver.address, value_wei=10**15,
            nonce=next_nonce(w3, node.accounts[1].address),
        )  # fmt: skip
        assert send_raw(w3, tx.raw) == tx.tx_hash
        assert send_raw(w3, tx.raw) == tx.tx_hash
        assert wait_receipt(w3, tx.tx_hash, timeout=10).succeeded
        assert native_balance_wei(w3, receiver.address) == 10**15
    assert not node.running


def test_a_different_transaction_on_a_used_nonce_is_a_conflict(chain) -> None:
    w3 = chain.web3()
    sender = chain.new_wallet()
    nonce = next_nonce(w3, sender.address)
    fees = suggest_fees(w3)
    first = build_native_transfer(
        w3, private_key=sender.private_key, to=generate_keypair().address, value_wei=1,
        nonce=nonce, fees=fees,
    )  # fmt: skip
    rival = build_native_transfer(
        w3, private_key=sender.private_key, to=generate_keypair().address, value_wei=2,
        nonce=nonce, fees=fees,
    )  # fmt: skip
    send_raw(w3, first.raw)
    wait_receipt(w3, first.tx_hash, timeout=10)
    with pytest.raises(NonceConflict):
        send_raw(w3, rival.raw)


def test_native_transfer(chain) -> None:
    w3 = chain.web3()
    sender, receiver = chain.new_wallet(native_wei=2 * 10**18), generate_keypair()
    tx = build_native_transfer(
        w3, private_key=sender.private_key, to=receiver.address, value_wei=5 * 10**17,
        nonce=next_nonce(w3, sender.address),
    )  # fmt: skip
    assert tx.gas == 21_000
    send_raw(w3, tx.raw)
    receipt = wait_receipt(w3, tx.tx_hash, timeout=10)
    assert receipt.succeeded
    assert native_balance_wei(w3, receiver.address) == 5 * 10**17
    assert native_balance_wei(w3, sender.address) == 2 * 10**18 - 5 * 10**17 - receipt.fee_wei


def test_sweeping_native_balance_leaves_only_dust(chain) -> None:
    w3 = chain.web3()
    sender, receiver = chain.new_wallet(native_wei=10**18), generate_keypair()
    fees = suggest_fees(w3)
    value = sendable_native_wei(native_balance_wei(w3, sender.address), fees)
    tx = build_native_transfer(
        w3, private_key=sender.private_key, to=receiver.address, value_wei=value,
        nonce=next_nonce(w3, sender.address), fees=fees,
    )  # fmt: skip
    assert has_gas_for(w3, tx)
    send_raw(w3, tx.raw)
    assert wait_receipt(w3, tx.tx_hash, timeout=10).succeeded
    assert native_balance_wei(w3, receiver.address) == value


def test_insufficient_gas_is_detected_before_and_at_sending(chain) -> None:
    w3 = chain.web3()
    sender = chain.new_wallet(native_wei=0)
    chain.contracts.mint(chain.contracts.pusd, sender.address, 1_000_000)
    tx = build_erc20_transfer(
        w3, private_key=sender.private_key, token=chain.contracts.pusd,
        to=generate_keypair().address, amount_base=1_000_000, nonce=0,
    )  # fmt: skip
    assert gas_needed(tx) == tx.gas * tx.max_fee_per_gas > 0
    assert not has_gas_for(w3, tx)
    with pytest.raises(InsufficientGas) as caught:
        require_gas_for(w3, tx)
    assert caught.value.needed_wei == gas_needed(tx)
    assert caught.value.available_wei == 0
    with pytest.raises(InsufficientGas):
        send_raw(w3, tx.raw)
    assert token_balance_base(w3, chain.contracts.pusd, sender.address) == 1_000_000

    chain.contracts.fund_native(sender.address, gas_needed(tx))
    assert has_gas_for(w3, tx)
    send_raw(w3, tx.raw)
    assert wait_receipt(w3, tx.tx_hash, timeout=10).succeeded


def test_a_transfer_that_would_revert_is_refused_when_built(chain) -> None:
    w3 = chain.web3()
    sender = chain.new_wallet()
    with pytest.raises(TransactionRejected, match="exceeds balance"):
        build_erc20_transfer(
            w3, private_key=sender.private_key, token=chain.contracts.pusd,
            to=generate_keypair().address, amount_base=1, nonce=next_nonce(w3, sender.address),
        )  # fmt: skip


def test_wait_receipt_times_out_for_a_transaction_that_cannot_mine(chain) -> None:
    w3 = chain.web3()
    sender = chain.new_wallet()
    # nonce 5 on a fresh wallet: a gap the node will wait on forever
    tx = build_native_transfer(
        w3, private_key=sender.private_key, to=generate_keypair().address, value_wei=1,
        nonce=5, fees=Fees(max_fee_per_gas=10**10, max_priority_fee_per_gas=10**9),
    )  # fmt: skip
    send_raw(w3, tx.raw)
    with pytest.raises(ReceiptTimeout) as caught:
        wait_receipt(w3, tx.tx_hash, timeout=0.5, poll_interval=0.1)
    assert caught.value.tx_hash == tx.tx_hash


def test_a_native_transfer_beyond_the_balance_is_flagged_before_sending(chain) -> None:
    w3 = chain.web3()
    sender = chain.new_wallet(native_wei=10**15)
    tx = build_native_transfer(
        w3, private_key=sender.private_key, to=generate_keypair().address, value_wei=10**15,
        nonce=next_nonce(w3, sender.address),
    )  # fmt: skip
    # the value fits, the value plus gas does not
    assert gas_needed(tx) == 10**15 + tx.gas * tx.max_fee_per_gas
    assert not has_gas_for(w3, tx)
    with pytest.raises(InsufficientGas):
        send_raw(w3, tx.raw)
