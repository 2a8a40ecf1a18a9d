"""Withdrawals from a deposit wallet (issue 16): one relayer WALLET batch, no POL; the signed
batch stored before it leaves and the relayer's id after; FAILED shows the relayer's reason,
a relayer that is down keeps the batch and resends the same bytes, a crash between submit
and record never sends twice; the CLOB re-reads the balance afterwards."""

from __future__ import annotations

import json
import secrets
import time
from decimal import Decimal

import pytest

from models.wallet import OPEN_STATES, Withdrawal
from services.platform import errors, venues
from services.wallets import wallet_batches, withdrawals

DEST = "0x" + "ab" * 20


def _send(withdrawal: Withdrawal) -> str:
    return withdrawals.send_by_relayer(withdrawal.id, max_polls=3)


def _until_final(row: Withdrawal, seconds: float = 15.0) -> str:
    """Run the job again (as maintenance re-queues an open row) until the row is final."""
    deadline = time.monotonic() + seconds
    while (status := _send(row)) in OPEN_STATES and time.monotonic() < deadline:
        time.sleep(0.3)
    return status


def _crash_once(monkeypatch, row: Withdrawal, step: str, fault) -> None:
    """Run the job once with ``BatchRow.<step>`` replaced by ``fault`` (the process dies)."""
    monkeypatch.setattr(wallet_batches.BatchRow, step, fault)
    with pytest.raises(SystemExit):
        _send(row)
    monkeypatch.undo()


def _withdrawing(make_trader, funds: str, amount: str) -> tuple[object, str, Withdrawal]:
    """A deposit-wallet trader holding ``funds`` pUSD, its wallet, and a recorded withdrawal."""
    trader = make_trader(funds, deposit_wallet=True)
    row = withdrawals.request(trader.user, DEST, Decimal(amount), "usdc")
    return trader, trader.wallet.funder_address, row


def test_pusd_leaves_the_deposit_wallet_once_through_the_relayer(make_trader,
                                                                 venue_control) -> None:
    trader = make_trader("100", deposit_wallet=True)
    maker = trader.wallet.funder_address
    with pytest.raises(errors.ValidationFailed):
        withdrawals.request(trader.user, maker, Decimal("1"), "usdc")
    dest = "0x" + secrets.token_hex(20)  # the sandbox is shared: a recipient of its own
    row = withdrawals.request(trader.user, dest, Decimal("30"), "usdc")
    assert withdrawals.send(row.id) == "confirmed"
    assert withdrawals.send(row.id) == "confirmed"  # again: nothing is sent twice
    done = Withdrawal.get_by_id(row.id)
    assert done.relayer_transaction_id and done.relayer_nonce is not None
    assert json.loads(done.relayer_payload)["type"] == "WALLET"
    shown = withdrawals.describe(done)
    assert shown["relayer_transaction_id"] == done.relayer_transaction_id
    # the chain hash the relayer ran the batch in, kept on the record
    assert shown["tx_hash"] == done.relayer_transaction_hash
    assert len(shown["tx_hash"]) == 66 and shown["error"] is None
    assert venue_control.balances(maker)["pusd"] == "70"
    assert venue_control.balances(dest)["pusd"] == "30"


def test_a_failed_batch_shows_the_relayers_reason_and_a_new_request_goes_through(
        make_trader, venue_control) -> None:
    trader = make_trader("50", deposit_wallet=True)
    maker = trader.wallet.funder_address
    venue_control.call("POST", "/relayer", {"fail_next": {"state": "FAILED",
                                                          "message": "gas estimation failed"}},
                       expect=200)
    row = withdrawals.request(trader.user, DEST, Decimal("20"), "usdc")
    assert _send(row) == "failed"
    failed = Withdrawal.get_by_id(row.id)
    assert "STATE_FAILED" in failed.error and "gas estimation failed" in failed.error
    assert venue_control.balances(maker)["pusd"] == "50"
    # More than the wallet holds: the transfer reverts and the token's reason is shown.
    short = withdrawals.request(trader.user, DEST, Decimal("80"), "usdc")
    assert _send(short) == "failed"
    assert "exceeds balance" in Withdrawal.get_by_id(short.id).error
    retry = withdrawals.request(trader.user, DEST, Decimal("20"), "usdc")
    assert _send(retry) == "confirmed"
    assert venue_control.balances(maker)["pusd"] == "30"


def test_a_relayer_that_is_down_leaves_the_withdrawal_open_and_the_next_run_sends_it(
        make_trader, venue_control) -> None:
    _trader, maker, row = _withdrawing(make_trader, "40", "15")
    venue_control.call("POST", "/relayer", {"down": True}, expect=200)
    try:
        assert _send(row) == "signed"
    finally:
        venue_control.call("POST", "/relayer", {"down": False}, expect=200)
    kept = Withdrawal.get_by_id(row.id)
    assert kept.relayer_transaction_id is None and "did not answer" in kept.error
    assert venue_control.balances(maker)["pusd"] == "40"
    assert _send(row) == "confirmed"
    assert Withdrawal.get_by_id(row.id).error is None
    assert venue_control.balances(maker)["pusd"] == "25"


def test_a_stored_batch_whose_answer_was_lost_is_resent_as_the_same_bytes(
        make_trader, venue_control, monkeypatch) -> None:
    _trader, maker, row = _withdrawing(make_trader, "40", "15")
    stored: list[str] = []
    real_store = wallet_batches.BatchRow.store_signed

    def store_then_die(self, payload, wallet, owner) -> None:
        real_store(self, payload, wallet, owner)
        stored.append(Withdrawal.get_by_id(row.id).relayer_payload)
        raise SystemExit("killed after storing, before submitting")

    _crash_once(monkeypatch, row, "store_signed", store_then_die)
    assert _send(row) == "confirmed"
    assert Withdrawal.get_by_id(row.id).relayer_payload == stored[0]  # never re-signed
    assert venue_control.balances(maker)["pusd"] == "25"


def test_a_crash_between_submit_and_record_never_sends_twice(make_trader, venue_control,
                                                             monkeypatch) -> None:
    _trader, maker, row = _withdrawing(make_trader, "40", "10")

    def crash(self, transaction_id: str) -> None:
        raise SystemExit("killed after the relayer answered")

    _crash_once(monkeypatch, row, "store_id", crash)
    # The batch ran (the relayer took it), but its id was never recorded, and the relayer's
    # list of our transactions (which would name it) does not answer: the next run sees the
    # wallet's nonce moved past the stored batch, and the wallet's key is the server's
    # alone, so no other batch could have used that nonce: it ran, once.
    venue_control.call("POST", "/faults", {"path": "/relayer/transactions", "method": "GET",
                                           "status": 500, "count": 50}, expect=201)
    try:
        assert _until_final(row) == "confirmed"
    finally:
        venue_control.call("DELETE", "/faults", expect=200)
    assert "it ran" in Withdrawal.get_by_id(row.id).error
    assert venue_control.balances(maker)["pusd"] == "30"
    assert _send(row) == "confirmed"
    assert venue_control.balances(maker)["pusd"] == "30"


def test_a_stored_batch_past_its_deadline_that_never_ran_is_signed_afresh(
        make_trader, venue_control) -> None:
    trader, maker, row = _withdrawing(make_trader, "40", "5")
    # A batch signed and stored, then the process died before submitting it; by now its
    # deadline has passed and the wallet's nonce is still the batch's: it never ran.
    nonce = venues.client().relayer.nonce(trader.wallet.address)
    Withdrawal.update(status="signed", relayer_nonce=nonce, relayer_deadline=1,
                      relayer_payload=json.dumps({"nonce": str(nonce)})).where(
        Withdrawal.id == row.id).execute()
    assert _send(row) == "confirmed"
    assert venue_control.balances(maker)["pusd"] == "35"

