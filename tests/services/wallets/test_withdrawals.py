"""Withdrawals of accounts that send their own transactions (a legacy, operator-allowlisted
plain EOA paying gas) against anvil: each token moves, nonces never collide, a crash never
double-sends. Deposit wallets withdraw through the relayer: test_relayer_withdrawals.py."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest

from chain.keys import generate_keypair
from chain.tokens import native_balance_wei, token_balance_base
from chain.transactions import next_nonce
from models.base import db
from models.wallet import TradingWallet, WalletTransaction, Withdrawal
from services.platform import errors
from services.wallets import withdrawals
from tests.conftest import ONE_MATIC, free_port
from tests.wallet_fixtures import USDC, chain_settings, faulty_web3, legacy_eoa_wallet, use_chain


def _received(chain, token: str, address: str) -> int:
    w3, dev = chain.web3(), chain.contracts
    if token == "matic":
        return native_balance_wei(w3, address)
    return token_balance_base(w3, dev.pusd if token == "usdc" else dev.usdce, address)


@pytest.mark.parametrize(("token", "amount", "base"), [
    ("usdc", Decimal("2.5"), 2_500_000),
    ("usdc_e", Decimal("0.000001"), 1),
    ("matic", Decimal("0.1"), 10**17),
])
def test_each_token_moves_on_chain(wallet_chain, fund, user, token, amount, base) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=5 * USDC, usdce=5 * USDC, matic_wei=ONE_MATIC)
    to = generate_keypair().address
    withdrawal = withdrawals.request(user, to.lower(), amount, token)
    assert withdrawal.status == "queued" and withdrawal.transaction_id is None
    assert withdrawal.to_address == to  # stored checksummed

    assert withdrawals.send(withdrawal.id) == "confirmed"
    assert _received(wallet_chain, token, to) == base
    done = Withdrawal.get_by_id(withdrawal.id)
    tx = done.transaction
    receipt = wallet_chain.web3().eth.get_transaction_receipt(tx.tx_hash)
    assert receipt["status"] == 1 and receipt["blockNumber"] == tx.block_number
    assert tx.gas_fee > 0 and tx.nonce == 0
    described = withdrawals.describe(done)
    assert described["tx_hash"] == tx.tx_hash and described["status"] == "confirmed"
    # a second run of the same job is a no-op
    assert withdrawals.send(withdrawal.id) == "confirmed"
    assert _received(wallet_chain, token, to) == base


def test_withdraw_answers_with_the_hash_when_broadcast_in_time(wallet_chain, fund, user,
                                                               redis_url) -> None:
    # the action enqueues; here the job runs in a thread standing in for the worker
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=3 * USDC)
    to = generate_keypair().address
    withdrawal = withdrawals.request(user, to, Decimal("1"), "usdc")
    runner = threading.Thread(target=_run_in_connection, args=(withdrawal.id,))
    runner.start()
    result = withdrawals.result(withdrawals.wait_for_broadcast(withdrawal.id, 10))
    runner.join()
    assert result.success and result.tx_hash and result.tx_hash.startswith("0x")
    assert result.status in ("broadcast", "confirmed")
    assert str(withdrawal.id) in result.message


def test_queued_answer_when_nothing_broadcasts_in_time(wallet_chain, fund, user) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=3 * USDC)
    withdrawal = withdrawals.request(user, generate_keypair().address, Decimal("1"), "usdc")
    result = withdrawals.result(withdrawals.wait_for_broadcast(withdrawal.id, 0.1))
    assert result.success and result.tx_hash is None and result.status == "queued"
    assert f"/api/trading-wallet/withdrawals/{withdrawal.id}" in result.message


def _run_in_connection(withdrawal_id) -> str:
    with db.connection_context():
        return withdrawals.send(withdrawal_id)


def test_concurrent_withdrawals_get_distinct_nonces(wallet_chain, fund, user) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=10 * USDC, matic_wei=ONE_MATIC)
    to = generate_keypair().address
    first = withdrawals.request(user, to, Decimal("3"), "usdc")
    second = withdrawals.request(user, to, Decimal("4"), "usdc")
    results: dict[str, str] = {}
    barrier = threading.Barrier(2)

    def job(withdrawal_id) -> None:
        barrier.wait()  # each job thread has its own connection, as in the worker
        results[str(withdrawal_id)] = _run_in_connection(withdrawal_id)

    threads = [threading.Thread(target=job, args=(w.id,)) for w in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(results.values()) == {"confirmed"}
    txs = [Withdrawal.get_by_id(w.id).transaction for w in (first, second)]
    assert sorted(t.nonce for t in txs) == [0, 1]
    assert _received(wallet_chain, "usdc", to) == 7 * USDC
    assert next_nonce(wallet_chain.web3(), wallet.address) == 2
    assert TradingWallet.get_by_id(wallet.id).next_nonce == 2


def test_second_withdrawal_refused_when_first_reserves_the_balance(wallet_chain, fund,
                                                                  user) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=5 * USDC)
    withdrawals.request(user, generate_keypair().address, Decimal("3"), "usdc")
    with pytest.raises(errors.InsufficientBalance, match="2 available"):
        withdrawals.request(user, generate_keypair().address, Decimal("3"), "usdc")


@pytest.mark.parametrize("fail_send", ["before", "after"])
def test_rerun_after_a_crash_between_signing_and_recording_sends_once(
        app, wallet_chain, fund, user, fail_send) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, usdce=5 * USDC)
    to = generate_keypair().address
    withdrawal = withdrawals.request(user, to, Decimal("1.5"), "usdc_e")

    # the first run signs and persists, then loses the connection while broadcasting
    # (before the node got it, or after): the job fails with the transaction still "signed"
    broken = faulty_web3(wallet_chain.rpc_url, fail_send=fail_send)
    use_chain(chain_settings(app, wallet_chain), web3=broken)
    with pytest.raises(errors.Unavailable) as caught:
        try:
            withdrawals.send(withdrawal.id)
        except Exception as exc:
            raise errors.from_external(exc) from exc
    assert caught.value.status == 503
    stuck = Withdrawal.get_by_id(withdrawal.id)
    assert stuck.status == "signed"
    signed_hash = stuck.transaction.tx_hash
    expected_on_chain = 1 if fail_send == "after" else 0
    assert next_nonce(wallet_chain.web3(), wallet.address) == expected_on_chain

    # the re-run re-sends the stored bytes: same hash, one transfer, one nonce used
    use_chain(chain_settings(app, wallet_chain))
    assert withdrawals.send(withdrawal.id) == "confirmed"
    assert Withdrawal.get_by_id(withdrawal.id).transaction.tx_hash == signed_hash
    assert WalletTransaction.select().where(WalletTransaction.wallet == wallet.id).count() == 1
    assert _received(wallet_chain, "usdc_e", to) == 1_500_000
    assert next_nonce(wallet_chain.web3(), wallet.address) == 1


def test_unsent_signed_transaction_is_resent_before_the_next_nonce(app, wallet_chain, fund,
                                                                   user) -> None:
    # a job that died after persisting never came back; the next withdrawal must not leave
    # a nonce gap behind it: it re-sends the orphan first, then takes the following nonce
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=5 * USDC)
    to = generate_keypair().address
    orphan = withdrawals.request(user, to, Decimal("1"), "usdc")
    use_chain(chain_settings(app, wallet_chain),
                           web3=faulty_web3(wallet_chain.rpc_url, fail_send="before"))
    with pytest.raises(Exception, match="injected"):
        withdrawals.send(orphan.id)
    use_chain(chain_settings(app, wallet_chain))
    later = withdrawals.request(user, to, Decimal("2"), "usdc")
    assert withdrawals.send(later.id) == "confirmed"
    assert Withdrawal.get_by_id(later.id).transaction.nonce == 1
    assert _received(wallet_chain, "usdc", to) == 3 * USDC
    assert withdrawals.send(orphan.id) == "confirmed"
    assert _received(wallet_chain, "usdc", to) == 3 * USDC


@pytest.mark.parametrize(("to_address", "amount", "token", "field"), [
    ("0x1234", Decimal("1"), "usdc", "to_address"),
    ("0x" + "g" * 40, Decimal("1"), "usdc", "to_address"),
    ("0x" + "0" * 40, Decimal("1"), "usdc", "to_address"),
    ("0xAbCdEf0123456789aBcDeF0123456789AbCdEf01", Decimal("1"), "usdc", "to_address"),
    ("0x" + "ab" * 20, Decimal("0"), "usdc", "amount"),
    ("0x" + "ab" * 20, Decimal("-1"), "usdc", "amount"),
    ("0x" + "ab" * 20, Decimal("1.0000001"), "usdc", "amount"),
    ("0x" + "ab" * 20, Decimal("1"), "dai", "token"),
])
def test_bad_input_is_validation_failed(wallet_chain, user, to_address, amount, token,
                                        field) -> None:
    with pytest.raises(errors.ValidationFailed) as caught:
        withdrawals.request(user, to_address, amount, token)
    assert field in caught.value.fields
    assert Withdrawal.select().count() == 0


def test_matic_accepts_eighteen_decimals(wallet_chain, fund, user) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, matic_wei=ONE_MATIC)
    to = generate_keypair().address
    withdrawal = withdrawals.request(user, to, Decimal("0.000000000000000001"), "matic")
    assert withdrawals.send(withdrawal.id) == "confirmed"
    assert native_balance_wei(wallet_chain.web3(), to) == 1


def test_more_than_the_balance_is_402(wallet_chain, fund, user) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=1 * USDC)
    with pytest.raises(errors.InsufficientBalance) as caught:
        withdrawals.request(user, "0x" + "ab" * 20, Decimal("1.000001"), "usdc")
    assert caught.value.status == 402 and caught.value.code == "insufficient_balance"
    with pytest.raises(errors.InsufficientBalance, match="gas"):
        withdrawals.request(user, "0x" + "ab" * 20, Decimal("1"), "matic")


def test_no_gas_is_402_with_a_matic_message(wallet_chain, fund, user) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=5 * USDC, matic_wei=0)
    with pytest.raises(errors.InsufficientBalance, match="MATIC to pay gas") as caught:
        withdrawals.request(user, "0x" + "ab" * 20, Decimal("1"), "usdc")
    assert caught.value.status == 402
    assert Withdrawal.select().count() == 0


def test_gas_gone_by_the_time_the_job_runs_fails_without_sending(wallet_chain, fund,
                                                                 user) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=5 * USDC)
    withdrawal = withdrawals.request(user, "0x" + "ab" * 20, Decimal("1"), "usdc")
    wallet_chain.contracts.fund_native(wallet.address, 0)
    assert withdrawals.send(withdrawal.id) == "failed"
    failed = Withdrawal.get_by_id(withdrawal.id)
    assert "MATIC" in failed.error and failed.transaction_id is None
    assert next_nonce(wallet_chain.web3(), wallet.address) == 0


def test_rpc_unreachable_is_503_and_leaves_no_record(app, wallet_chain, user) -> None:
    legacy_eoa_wallet(user)
    dead = f"http://127.0.0.1:{free_port()}"
    use_chain(chain_settings(app, wallet_chain, POLYGON_RPC_URL=dead,
                                          POLYGON_RPC_TIMEOUT="1"))
    with pytest.raises(Exception) as caught:
        withdrawals.request(user, "0x" + "ab" * 20, Decimal("1"), "usdc")
    mapped = errors.from_external(caught.value)
    assert mapped.status == 503 and mapped.retry_after
    assert Withdrawal.select().count() == 0


def test_rpc_down_when_the_job_starts_fails_it_unsent(app, wallet_chain, fund, user) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=5 * USDC)
    withdrawal = withdrawals.request(user, "0x" + "ab" * 20, Decimal("1"), "usdc")
    dead = f"http://127.0.0.1:{free_port()}"
    use_chain(chain_settings(app, wallet_chain, POLYGON_RPC_URL=dead,
                                          POLYGON_RPC_TIMEOUT="1"))
    assert withdrawals.send(withdrawal.id) == "failed"
    assert "nothing was sent" in Withdrawal.get_by_id(withdrawal.id).error
    use_chain(chain_settings(app, wallet_chain))
    # failed for good: running the job again can never send it
    assert withdrawals.send(withdrawal.id) == "failed"
    assert next_nonce(wallet_chain.web3(), wallet.address) == 0


def test_someone_elses_withdrawal_is_not_found(wallet_chain, fund, user) -> None:
    from models.user import User

    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=5 * USDC)
    withdrawal = withdrawals.request(user, "0x" + "ab" * 20, Decimal("1"), "usdc")
    other = User.create(email="other@example.com")
    with pytest.raises(errors.NotFound):
        withdrawals.get(other, withdrawal.id)
    assert withdrawals.get(user, withdrawal.id).id == withdrawal.id


def test_matic_in_flight_is_reserved_once(app, wallet_chain, fund, user) -> None:
    # a MATIC withdrawal signed but not yet sent holds its value and gas, counted once
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, matic_wei=ONE_MATIC)
    to = generate_keypair().address
    first = withdrawals.request(user, to, Decimal("0.4"), "matic")
    use_chain(chain_settings(app, wallet_chain),
                           web3=faulty_web3(wallet_chain.rpc_url, fail_send="before"))
    with pytest.raises(Exception, match="injected"):
        withdrawals.send(first.id)
    use_chain(chain_settings(app, wallet_chain))
    second = withdrawals.request(user, to, Decimal("0.4"), "matic")
    with pytest.raises(errors.InsufficientBalance):
        withdrawals.request(user, to, Decimal("0.4"), "matic")
    assert withdrawals.send(second.id) == "confirmed"
    assert withdrawals.send(first.id) == "confirmed"
    assert native_balance_wei(wallet_chain.web3(), to) == 8 * 10**17
