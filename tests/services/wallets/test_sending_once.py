"""Money moves once: concurrent job runs, a lost signing lease, replaced transactions, and
withdrawals that could not be queued (issue 18, findings 1, 7 and 12), against anvil."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import pytest

from chain.keys import generate_keypair
from chain.transactions import build_native_transfer, next_nonce, send_raw
from models.base import db, utcnow
from models.wallet import TradingWallet, WalletTransaction, Withdrawal
from services.platform import errors, runtime
from services.wallets import wallet_transactions, wallets, withdrawals
from tests.conftest import ONE_MATIC, free_port
from tests.services.wallets.test_withdrawals import _received
from tests.wallet_fixtures import USDC, chain_settings, faulty_web3, legacy_eoa_wallet, use_chain


def _in_function(thread: threading.Thread, name: str) -> bool:
    """Whether ``thread`` is currently executing inside function ``name`` (observed, not
    patched: the stack of a live thread)."""
    frame = sys._current_frames().get(thread.ident or 0)
    while frame is not None:
        if frame.f_code.co_name == name:
            return True
        frame = frame.f_back
    return False


def _until(predicate, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


@pytest.mark.parametrize("payable_times", [1, 2])
def test_two_runs_of_one_withdrawal_at_once_send_it_once(wallet_chain, fund, user,
                                                         payable_times) -> None:
    # The worker can run one job twice at once (re-queued at shutdown while its thread goes
    # on, a reaped live worker). Both runs pass the unlocked "already signed?" check and
    # queue on the wallet's signing lease; the second must find the first's transaction.
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=payable_times * 3 * USDC)
    to = generate_keypair().address
    withdrawal = withdrawals.request(user, to, Decimal("3"), "usdc")
    outcomes: list[object] = []

    def run() -> None:
        with db.connection_context():
            try:
                outcomes.append(withdrawals.send(withdrawal.id))
            except Exception as exc:
                outcomes.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    with wallet_transactions.nonce_lease(wallet):
        for thread in threads:
            thread.start()
        _until(lambda: all(_in_function(t, "nonce_lease") for t in threads))
    for thread in threads:
        thread.join(60)

    assert outcomes == ["confirmed", "confirmed"]
    assert _received(wallet_chain, "usdc", to) == 3 * USDC  # one transfer went out
    assert next_nonce(wallet_chain.web3(), wallet.address) == 1
    done = Withdrawal.get_by_id(withdrawal.id)
    assert done.status == "confirmed" and done.error is None
    assert WalletTransaction.select().where(WalletTransaction.wallet == wallet.id).count() == 1


def _sign(w3, key: bytes, nonce: int, to: str) -> object:
    return build_native_transfer(w3, private_key=key, to=to, value_wei=1, nonce=nonce)


def test_a_signer_that_lost_its_lease_persists_and_sends_nothing(wallet_chain, fund,
                                                                 user) -> None:
    # A slow RPC holds the first signer past its lease; a second signer takes the wallet and
    # the same nonce. The first must notice at persist time, not store a twin nonce.
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, matic_wei=ONE_MATIC)
    building, resume = threading.Event(), threading.Event()
    slow_result: list[object] = []

    def slow_build(w3, key, nonce):
        building.set()
        assert resume.wait(30)  # the slow RPC answers only now
        return _sign(w3, key, nonce, generate_keypair().address)

    def slow_signer() -> None:
        with db.connection_context():
            try:
                slow_result.append(wallet_transactions.submit(wallet, "withdrawal", slow_build))
            except Exception as exc:
                slow_result.append(exc)

    thread = threading.Thread(target=slow_signer)
    thread.start()
    assert building.wait(30)
    # the lease's 60 s run out meanwhile (the fault: its deadline moved into the past)
    TradingWallet.update(nonce_lease_until=utcnow() - timedelta(seconds=1)).where(
        TradingWallet.id == wallet.id).execute()
    fast = wallet_transactions.submit(
        wallet, "withdrawal", lambda w3, key, nonce: _sign(w3, key, nonce,
                                                           generate_keypair().address))
    resume.set()
    thread.join(60)

    assert fast.nonce == 0
    assert isinstance(slow_result[0], errors.Conflict)
    rows = list(WalletTransaction.select().where(WalletTransaction.wallet == wallet.id))
    assert [r.tx_hash for r in rows] == [fast.tx_hash]  # the loser stored nothing
    assert next_nonce(wallet_chain.web3(), wallet.address) == 1


def _stalling_web3(rpc_url: str, method: str, stalled: threading.Event,
                   resume: threading.Event, thread_name: str):
    """A Web3 whose first ``method`` call from thread ``thread_name`` hangs until ``resume``
    (a slow RPC provider: the fault), while every other call goes straight through."""
    from chain.rpc import connect

    w3 = connect(rpc_url)
    forward = w3.provider.make_request

    def make_request(name, params):
        if (name == method and threading.current_thread().name == thread_name
                and not stalled.is_set()):
            stalled.set()
            assert resume.wait(30)
        return forward(name, params)

    w3.provider.make_request = make_request
    return w3


def test_the_signing_lease_lasts_the_configured_seconds(wallet_chain, user) -> None:
    # WALLET_SIGNING_LEASE_SECONDS: taking and renewing the lease both hold it that long
    from services.platform.chain_access import current
    from services.platform.chain_settings import ChainAccess

    wallet = legacy_eoa_wallet(user)
    previous = runtime.runtime()
    runtime.install(replace(previous, chain=ChainAccess(replace(current(),
                                                                signing_lease_seconds=7))))

    def held() -> float:
        return (TradingWallet.get_by_id(wallet.id).nonce_lease_until - utcnow()).total_seconds()

    try:
        with wallet_transactions.nonce_lease(wallet) as owner:
            assert 0 < held() <= 7
            TradingWallet.update(nonce_lease_until=utcnow()).where(
                TradingWallet.id == wallet.id).execute()
            wallet_transactions.renew_lease(wallet, owner)
            assert 0 < held() <= 7
        assert TradingWallet.get_by_id(wallet.id).nonce_lease_until is None
    finally:
        runtime.install(previous)


def test_a_withdrawal_job_stalled_by_a_slow_rpc_past_its_lease_sends_once(
        app, wallet_chain, fund, user) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=10 * USDC)
    to = generate_keypair().address
    slow = withdrawals.request(user, to, Decimal("3"), "usdc")
    fast = withdrawals.request(user, to, Decimal("4"), "usdc")
    stalled, resume = threading.Event(), threading.Event()
    use_chain(chain_settings(app, wallet_chain), web3=_stalling_web3(
        wallet_chain.rpc_url, "eth_estimateGas", stalled, resume, "slow-job"))
    outcome: list[object] = []

    def run() -> None:
        with db.connection_context():
            try:
                outcome.append(withdrawals.send(slow.id))
            except Exception as exc:
                outcome.append(exc)

    thread = threading.Thread(target=run, name="slow-job")
    thread.start()
    assert stalled.wait(30)  # the slow job holds the lease and nonce 0, waiting on the RPC
    TradingWallet.update(nonce_lease_until=utcnow() - timedelta(seconds=1)).where(
        TradingWallet.id == wallet.id).execute()  # ... for longer than the lease lasts
    assert withdrawals.send(fast.id) == "confirmed"  # another job takes the wallet: nonce 0
    resume.set()
    thread.join(60)

    assert isinstance(outcome[0], errors.Conflict)  # the stalled job stored and sent nothing
    assert Withdrawal.get_by_id(slow.id).status == "queued"
    assert withdrawals.send(slow.id) == "confirmed"  # its retry signs with the next nonce
    nonces = sorted(t.nonce for t in WalletTransaction.select())
    assert nonces == [0, 1]
    assert _received(wallet_chain, "usdc", to) == 7 * USDC


def test_a_second_in_flight_transaction_with_the_same_nonce_is_refused(wallet_chain,
                                                                       user) -> None:
    # the database itself refuses twin nonces while both would be in flight
    wallet = legacy_eoa_wallet(user)
    common = {"wallet": wallet.id, "kind": "withdrawal", "chain_id": 1, "nonce": 7,
              "raw_tx": "0x00", "to_address": wallet.address, "status": "broadcast"}
    WalletTransaction.create(tx_hash="0x" + "01" * 32, **common)
    with pytest.raises(Exception, match=r"(?i)unique"), db.atomic():
        WalletTransaction.create(tx_hash="0x" + "02" * 32, **common)
    # once settled, its nonce no longer blocks anything (history keeps its nonce)
    WalletTransaction.update(status="confirmed").execute()
    WalletTransaction.create(tx_hash="0x" + "03" * 32, **common)


def test_a_replaced_transaction_stops_reserving_its_amount(app, wallet_chain, fund,
                                                           user) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=5 * USDC)
    first = withdrawals.request(user, generate_keypair().address, Decimal("5"), "usdc")
    # signed and stored, but the broadcast never reached the node
    use_chain(chain_settings(app, wallet_chain),
              web3=faulty_web3(wallet_chain.rpc_url, fail_send="before"))
    with pytest.raises(Exception, match="injected"):
        withdrawals.send(first.id)
    use_chain(chain_settings(app, wallet_chain))
    stored = Withdrawal.get_by_id(first.id).transaction
    assert stored.nonce == 0
    # another transaction took nonce 0 on chain (sent from elsewhere with the same key)
    w3 = wallet_chain.web3()
    send_raw(w3, _sign(w3, wallets.signer(wallet), 0, generate_keypair().address).raw_hex)
    assert next_nonce(w3, wallet.address) == 1

    # the replaced transfer can never be mined: it no longer holds the 5 pUSD
    second = withdrawals.request(user, generate_keypair().address, Decimal("5"), "usdc")
    replaced = WalletTransaction.get_by_id(stored.id)
    assert replaced.status == "replaced"
    gone = Withdrawal.get_by_id(first.id)
    assert gone.status == "failed" and "nothing was sent" in gone.error
    assert withdrawals.send(first.id) == "failed"  # and it is never sent later
    assert withdrawals.send(second.id) == "confirmed"


@pytest.mark.parametrize("name", ["pusd", "usdce", "ctf", "neg_risk_adapter", "ctf_exchange",
                                  "neg_risk_exchange"])
def test_withdrawals_to_the_token_contracts_are_refused(app, wallet_chain, fund, user,
                                                        name) -> None:
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=5 * USDC)
    address = getattr(wallet_chain.contracts, name)
    with pytest.raises(errors.ValidationFailed) as caught:
        withdrawals.request(user, address.lower(), Decimal("1"), "usdc")
    assert "to_address" in caught.value.fields
    assert Withdrawal.select().count() == 0


def _with_dead_queue(action):
    """Run ``action`` with the runtime's job queue pointed at a dead Redis; its exception."""
    previous = runtime.runtime()
    dead = runtime.JobsConfig(redis_url=f"redis://127.0.0.1:{free_port()}/0",
                           prefix=previous.jobs.prefix)
    runtime.install(replace(previous, jobs=dead))
    try:
        with pytest.raises(Exception) as caught:
            action()
    finally:
        runtime.install(previous)
    return caught.value


def test_a_withdrawal_that_could_not_be_queued_never_goes_out(wallet_chain, fund,
                                                              user) -> None:
    # Redis is down at enqueue: the caller gets 503 and retries; the first record must not
    # be sent later by maintenance behind the caller's back
    wallet = legacy_eoa_wallet(user)
    fund(wallet.address, pusd=5 * USDC)
    failure = _with_dead_queue(lambda: withdrawals.withdraw(
        user, generate_keypair().address, Decimal("1"), "usdc", wait_seconds=0))
    assert errors.from_external(failure).status == 503
    record = Withdrawal.get()
    assert record.status == "failed" and "nothing was sent" in record.error
    assert record.transaction_id is None
    assert withdrawals.send(record.id) == "failed"
    assert next_nonce(wallet_chain.web3(), wallet.address) == 0


def test_a_claim_that_could_not_be_queued_never_goes_out(wallet_chain, user) -> None:
    from models.wallet import Claim
    from services.wallets import claims
    from tests.wallet_fixtures import catalogue_market

    dev = wallet_chain.contracts
    condition = dev.prepare_condition()
    catalogue_market(condition)
    wallet = legacy_eoa_wallet(user)
    dev.fund_native(wallet.address, ONE_MATIC)
    dev.split_position(wallet.address, condition, 4 * USDC, outcomes=[0])
    dev.resolve_condition(condition.question_id, [1, 0])
    failure = _with_dead_queue(lambda: claims.claim(user, wait_seconds=0))
    assert errors.from_external(failure).status == 503
    record = Claim.get()
    assert record.status == "failed" and "nothing was sent" in record.error
    assert claims.redeem(record.id) == "failed"
    assert next_nonce(wallet_chain.web3(), wallet.address) == 0


def test_two_runs_of_one_claim_at_once_redeem_it_once(wallet_chain, user) -> None:
    # claims share the fencing rule: the second run re-sends the first run's redeem
    from models.wallet import Claim
    from services.wallets import claims
    from tests.wallet_fixtures import catalogue_market

    dev = wallet_chain.contracts
    condition = dev.prepare_condition()
    catalogue_market(condition)
    wallet = legacy_eoa_wallet(user)
    dev.fund_native(wallet.address, ONE_MATIC)
    dev.split_position(wallet.address, condition, 4 * USDC, outcomes=[0])
    dev.resolve_condition(condition.question_id, [1, 0])
    [claim] = claims.request(user)
    outcomes: list[object] = []

    def run() -> None:
        with db.connection_context():
            try:
                outcomes.append(claims.redeem(claim.id))
            except Exception as exc:
                outcomes.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    with wallet_transactions.nonce_lease(wallet):
        for thread in threads:
            thread.start()
        _until(lambda: all(_in_function(t, "nonce_lease") for t in threads))
    for thread in threads:
        thread.join(60)

    assert outcomes == ["confirmed", "confirmed"]
    assert next_nonce(wallet_chain.web3(), wallet.address) == 1  # one redeem signed
    assert WalletTransaction.select().where(WalletTransaction.wallet == wallet.id).count() == 1
    assert Claim.get_by_id(claim.id).status == "confirmed"
