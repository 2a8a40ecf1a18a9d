"""Money out of a relayer-operated wallet moves once, whatever runs overlap (issue 26): the
job's real path (``withdrawals.send``, as the worker runs it) against the sandbox relayer
over HTTP, with the relayer's own fault switches losing answers."""

from __future__ import annotations

import json
import secrets
import threading
import time
from decimal import Decimal
from typing import Any

from click.testing import CliRunner
from web3 import Web3

from cli import main
from models.wallet import OPEN_STATES, Withdrawal
from services.platform import runtime, venues
from services.wallets import (
    trading_accounts,
    wallet_batches,
    wallet_transactions,
    wallets,
    withdrawals,
)
from tests.conftest import app_settings
from venue import relayer
from venue.accounts.wallet_calls import transfer_call
from venue.signing import OrderKey

NONCE_PATH = "/relayer/v1/account/transactions/params"
SUBMIT_PATH = "/relayer/submit"
LIST_PATH = "/relayer/transactions"


def _fault(venue_control: Any, path: str, **rule: Any) -> None:
    venue_control.call("POST", "/faults", {"path": path, "count": 1, **rule}, expect=201)


def _until_final(run: Any, row_id: Any, seconds: float = 20.0) -> str:
    """Run the job again (as maintenance re-queues an open row) until the row is final."""
    deadline = time.monotonic() + seconds
    status = run(row_id)
    while status in OPEN_STATES and time.monotonic() < deadline:
        time.sleep(0.3)
        status = run(row_id)
    return str(status)


def test_two_runs_of_one_withdrawal_whose_first_answer_is_lost_pay_once(
        make_trader, venue_control) -> None:
    trader = make_trader("100", deposit_wallet=True)
    maker = trader.maker
    dest = "0x" + secrets.token_hex(20)
    row = withdrawals.request(trader.user, dest, Decimal("30"), "usdc")
    # Run A stalls reading the wallet's nonce; run B starts meanwhile, and the relayer takes
    # the first batch it is sent but its answer is lost (a timeout, a reset connection).
    _fault(venue_control, NONCE_PATH, status=0, delay=1.5)
    _fault(venue_control, SUBMIT_PATH, method="POST", after=True, status=500)
    try:
        first = threading.Thread(target=withdrawals.send, args=(row.id,))
        first.start()
        time.sleep(0.3)
        withdrawals.send(row.id)
        first.join(30)
    finally:
        venue_control.call("DELETE", "/faults", expect=200)
    assert _until_final(withdrawals.send, row.id) == "confirmed"
    assert venue_control.balances(dest)["pusd"] == "30"
    assert venue_control.balances(maker)["pusd"] == "70"
    assert Withdrawal.get_by_id(row.id).status == "confirmed"


def stale_signed_withdrawal(trader: Any, amount: Decimal) -> Withdrawal:
    """A pUSD withdrawal whose batch a run that died stored after sending it: its deadline
    has just passed (the relayer refuses it again, "deadline expired"), but within the grace
    the relayer may still be running the first send, so the next run leaves it ambiguous."""
    row = withdrawals.request(trader.user, "0x" + secrets.token_hex(20), amount, "usdc")
    wallet = trader.wallet
    batch_row = wallet_batches.BatchRow(Withdrawal, row.id)
    base = int(amount * 1_000_000)
    payload = relayer.run_steps(
        wallet_batches.sign_steps(trading_accounts.relayer_auth(wallet), wallet,
                                  OrderKey(wallets.signer(wallet)),
                                  [transfer_call(row.token_address, row.to_address, base)],
                                  "copytrade withdrawal", clock=lambda: time.time() - 605),
        venues.client().transport.run)
    Withdrawal.update(status="signed").where(Withdrawal.id == row.id).execute()
    with wallet_transactions.nonce_lease(wallet) as owner:
        batch_row.store_signed(payload, wallet, owner)
    return row


def test_a_resend_refused_for_a_reason_but_busy_leaves_the_row_ambiguous(
        make_trader, venue_control) -> None:
    trader = make_trader("40", deposit_wallet=True)
    row = stale_signed_withdrawal(trader, Decimal("5"))
    assert withdrawals.send(row.id) == "ambiguous"
    kept = Withdrawal.get_by_id(row.id)
    assert "deadline expired" in kept.error and "Nothing was sent" not in kept.error
    assert kept.relayer_payload is not None
    assert withdrawals.result(kept).status == "ambiguous"


def test_a_relayer_withdrawal_done_within_the_wait_answers_with_its_hash(
        make_trader, venue_control) -> None:
    trader = make_trader("20", deposit_wallet=True)
    dest = "0x" + secrets.token_hex(20)

    def worker() -> None:
        # the job, as a worker picks it up once the request has recorded the withdrawal
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            row = Withdrawal.get_or_none(Withdrawal.to_address == Web3.to_checksum_address(dest))
            if row is not None:
                withdrawals.send(row.id)
                return
            time.sleep(0.05)

    runner = threading.Thread(target=worker)
    runner.start()
    answer = withdrawals.withdraw(trader.user, dest, Decimal("5"), "usdc", wait_seconds=15)
    runner.join(30)
    assert answer.status == "confirmed" and answer.success
    record = Withdrawal.get_by_id(answer.withdrawal_id)
    assert answer.tx_hash == record.relayer_transaction_hash and len(answer.tx_hash) == 66
    assert withdrawals.describe(record)["tx_hash"] == answer.tx_hash
    assert venue_control.balances(dest)["pusd"] == "5"


def test_a_second_batch_signed_with_a_pending_batchs_nonce_is_never_taken_for_it(
        make_trader, venue_control) -> None:
    trader = make_trader("100", deposit_wallet=True)
    maker = trader.maker
    first = withdrawals.request(trader.user, "0x" + secrets.token_hex(20), Decimal("5"), "usdc")
    second_dest = "0x" + secrets.token_hex(20)
    second = withdrawals.request(trader.user, second_dest, Decimal("7"), "usdc")
    # The relayer takes the first batch and runs it a moment later; its answer is lost, and
    # so are its lists of our transactions (which would name it) for a while.
    venue_control.call("POST", "/relayer", {"step_seconds": 1}, expect=200)
    _fault(venue_control, LIST_PATH, method="GET", status=500, count=10)
    _fault(venue_control, SUBMIT_PATH, method="POST", after=True, status=500)
    try:
        assert withdrawals.send_by_relayer(first.id, max_polls=1) == "ambiguous"
        # The second withdrawal runs meanwhile: the wallet's nonce is still the first
        # batch's. Whatever it signs must never be taken for a batch that ran: here the
        # relayer refuses it (the wallet is busy) and that answer is lost too.
        _fault(venue_control, SUBMIT_PATH, method="POST", after=True, status=500)
        withdrawals.send_by_relayer(second.id, max_polls=1)
        time.sleep(3.5)  # the first batch has run
    finally:
        venue_control.call("DELETE", "/faults", expect=200)
        venue_control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    assert _until_final(withdrawals.send, first.id) == "confirmed"
    assert _until_final(withdrawals.send, second.id) == "confirmed"
    assert venue_control.balances(second_dest)["pusd"] == "7"
    assert venue_control.balances(maker)["pusd"] == "88"


def test_ambiguous_wallet_operations_are_listed_for_the_operator(
        app, bound_db, make_trader, monkeypatch) -> None:
    saved = runtime.runtime()  # the command builds its own runtime: restored afterwards
    trader = make_trader("20", deposit_wallet=True)
    row = withdrawals.request(trader.user, "0x" + "cd" * 20, Decimal("4"), "usdc")
    Withdrawal.update(status="ambiguous", relayer_nonce=7, error="Sent, then the relayer's "
                      "answer was lost").where(Withdrawal.id == row.id).execute()
    monkeypatch.setenv("DATABASE_URL", app_settings(app).database_url)
    listed = CliRunner().invoke(main, ["wallets", "ambiguous"])
    assert listed.exit_code == 0, listed.output
    assert "AMBIGUOUS WALLET OPERATIONS (1)" in listed.output
    line = next(x for x in listed.output.splitlines() if str(row.id) in x)
    assert "withdrawal" in line and "4" in line and " 7 " in line and "ago" in line
    shown = json.loads(CliRunner().invoke(main, ["wallets", "ambiguous", "--json"]).output)
    assert [(r["id"], r["nonce"], r["wallet"]) for r in shown] == [
        (str(row.id), 7, trader.maker)]
    runtime.install(saved)
