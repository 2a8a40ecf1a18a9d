"""The relayer's wrong nonce with two deposit wallets (ACCOUNTS.md §12; py-sdk PR #213, ts-sdk
PR #247): ``/v1/account/transactions/params`` hands out another wallet's nonce, the relayer
refuses the batch naming the real one, and the batch is signed once more with it, stored
before it leaves, and sent: the money moves once, never through a second re-sign."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from models.wallet import Withdrawal
from services.wallets import wallet_batches, withdrawals

SUBMIT_PATH = "/relayer/submit"


@pytest.fixture
def wrong_nonce(venue_control: Any) -> Iterator[Any]:
    """Set the sandbox relayer's ``wrong_nonce`` switch; the venue's default back after."""

    def switch(mode: str) -> None:
        answer = venue_control.call("POST", "/relayer", {"wrong_nonce": mode}, expect=200)
        assert answer["wrong_nonce"] == mode

    yield switch
    switch("two_wallets")


def _wallet_nonce(venue_control: Any, maker: str) -> int:
    return int(venue_control.call("GET", f"/accounts/{maker}", expect=200)["wallet"]["nonce"])


def _handed_out(venue_control: Any, trader: Any) -> int:
    from services.platform import venues
    from services.wallets import trading_accounts
    from venue.relayer import RelayerApi

    auth = trading_accounts.relayer_auth(trader.wallet)
    return int(venues.client().transport.run(
        RelayerApi.execute_params_call(auth, trader.address)))


def _stores(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Every body the row stores before it leaves, first and re-signed, in order."""
    stored: list[dict] = []
    first = wallet_batches.BatchRow.store_signed
    again = getattr(wallet_batches.BatchRow, "restore_signed", None)  # absent: no re-sign

    def store(self, payload, wallet, owner) -> None:
        first(self, payload, wallet, owner)
        stored.append(dict(payload))

    def restore(self, refused, payload, wallet, owner) -> None:
        again(self, refused, payload, wallet, owner)
        stored.append(dict(payload))

    monkeypatch.setattr(wallet_batches.BatchRow, "store_signed", store)
    monkeypatch.setattr(wallet_batches.BatchRow, "restore_signed", restore, raising=False)
    return stored


def test_a_second_deposit_wallet_of_the_owner_gets_its_nonce_handed_out_and_the_withdrawal_is_resigned_once(  # noqa: E501
        make_trader, venue_control, monkeypatch) -> None:
    trader = make_trader("60", deposit_wallet=True)
    maker = trader.maker
    real = _wallet_nonce(venue_control, maker)
    # The owner key gets a second deposit wallet, whose nonce is not the first one's.
    other = "0x" + secrets.token_hex(20)
    venue_control.call("POST", "/deposit-wallets", {"wallet": other, "owner": trader.address},
                       expect=200)
    assert _handed_out(venue_control, trader) == 0 != real  # the venue's wrong nonce
    stored = _stores(monkeypatch)
    dest = "0x" + secrets.token_hex(20)
    row = withdrawals.request(trader.user, dest, Decimal("25"), "usdc")
    assert withdrawals.send(row.id) == "confirmed"
    # signed with the handed-out nonce, refused, signed once more with the named one
    assert [int(body["nonce"]) for body in stored] == [0, real]
    done = Withdrawal.get_by_id(row.id)
    assert json.loads(done.relayer_payload) == stored[-1] and done.relayer_nonce == real
    assert stored[0]["depositWalletParams"]["deadline"] == \
        stored[1]["depositWalletParams"]["deadline"]  # the same batch, only the nonce new
    assert venue_control.balances(dest)["pusd"] == "25"
    assert venue_control.balances(maker)["pusd"] == "35"
    assert _wallet_nonce(venue_control, maker) == real + 1


def test_a_refusal_of_the_resigned_batch_is_not_answered_by_a_second_resign(
        make_trader, venue_control, wrong_nonce, monkeypatch) -> None:
    trader = make_trader("30", deposit_wallet=True)
    wrong_nonce("always")
    stored = _stores(monkeypatch)
    # The re-signed batch is refused too (its nonce moved meanwhile, as a stand-in): the
    # withdrawal waits for the next run instead of signing a third time.
    real_submit = wallet_batches.relayer.submit_with_retry
    calls = {"n": 0}

    def submit(auth, payload, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            moved = dict(payload, nonce=str(int(payload["nonce"]) + 5))
            return real_submit(auth, moved, **kwargs)
        return real_submit(auth, payload, **kwargs)

    monkeypatch.setattr(wallet_batches.relayer, "submit_with_retry", submit)
    dest = "0x" + secrets.token_hex(20)
    row = withdrawals.request(trader.user, dest, Decimal("10"), "usdc")
    assert withdrawals.send(row.id) == "signed"
    assert calls["n"] == 2 and len(stored) == 2
    kept = Withdrawal.get_by_id(row.id)
    assert kept.relayer_payload is None and "does not match on-chain nonce" in kept.error
    assert venue_control.balances(dest)["pusd"] == "0"


def test_an_answer_lost_at_the_resend_still_ends_with_one_transaction(
        make_trader, venue_control, wrong_nonce, monkeypatch) -> None:
    trader = make_trader("50", deposit_wallet=True)
    maker = trader.maker
    real = _wallet_nonce(venue_control, maker)
    wrong_nonce("always")
    assert _handed_out(venue_control, trader) == real + 1
    # Once the re-signed body is stored, the relayer's answer to sending it is lost (the
    # relayer takes it, the answer never arrives).
    again = wallet_batches.BatchRow.restore_signed

    def restore_then_lose(self, refused, payload, wallet, owner) -> None:
        again(self, refused, payload, wallet, owner)
        venue_control.call("POST", "/faults", {"path": SUBMIT_PATH, "method": "POST",
                                               "count": 1, "after": True, "status": 500},
                           expect=201)

    monkeypatch.setattr(wallet_batches.BatchRow, "restore_signed", restore_then_lose)
    dest = "0x" + secrets.token_hex(20)
    row = withdrawals.request(trader.user, dest, Decimal("20"), "usdc")
    try:
        status = withdrawals.send(row.id)
        for _ in range(5):
            if status == "confirmed":
                break
            status = withdrawals.send(row.id)
    finally:
        venue_control.call("DELETE", "/faults", expect=200)
    assert status == "confirmed"
    done = Withdrawal.get_by_id(row.id)
    assert done.relayer_nonce == real and done.relayer_transaction_id
    assert venue_control.balances(dest)["pusd"] == "20"
    assert venue_control.balances(maker)["pusd"] == "30"
    assert _wallet_nonce(venue_control, maker) == real + 1  # one transaction ran


def test_a_wrong_nonce_is_never_taken_for_the_stored_batchs_nonce_used(
        make_trader, venue_control, wrong_nonce, monkeypatch) -> None:
    trader = make_trader("50", deposit_wallet=True)
    maker = trader.maker
    real = _wallet_nonce(venue_control, maker)
    wrong_nonce("always")  # the execute-params route answers one past the wallet's nonce
    # The re-signed batch is stored, then its send fails before the relayer sees it: the
    # row is left ambiguous with a batch that never ran.
    again = wallet_batches.BatchRow.restore_signed

    def restore_then_fail(self, refused, payload, wallet, owner) -> None:
        again(self, refused, payload, wallet, owner)
        venue_control.call("POST", "/faults", {"path": SUBMIT_PATH, "method": "POST",
                                               "count": 1, "status": 500}, expect=201)

    monkeypatch.setattr(wallet_batches.BatchRow, "restore_signed", restore_then_fail)
    dest = "0x" + secrets.token_hex(20)
    row = withdrawals.request(trader.user, dest, Decimal("20"), "usdc")
    assert withdrawals.send(row.id) == "ambiguous"
    assert venue_control.balances(dest)["pusd"] == "0"
    monkeypatch.undo()
    # The next run reads a nonce past the stored one from the execute-params route, which
    # would say the batch ran; the relayer, sent the stored bytes, takes them instead.
    assert withdrawals.send(row.id) == "confirmed"
    done = Withdrawal.get_by_id(row.id)
    assert done.relayer_nonce == real and done.relayer_transaction_id
    assert venue_control.balances(dest)["pusd"] == "20"
    assert venue_control.balances(maker)["pusd"] == "30"
    assert _wallet_nonce(venue_control, maker) == real + 1


def test_the_onboardings_approvals_go_through_once_resigned(
        make_trader, venue_control, wrong_nonce, monkeypatch) -> None:
    from models.wallet import WalletApproval

    wrong_nonce("always")
    stored = _stores(monkeypatch)
    trader = make_trader("0", deposit_wallet=True)  # the real onboarding: deploy, approve
    (approval,) = WalletApproval.select().where(WalletApproval.wallet == trader.wallet.id)
    assert approval.status == "confirmed" and approval.relayer_nonce == 0
    batches = [body for body in stored if body["type"] == "WALLET"]  # not the deployment
    assert [int(body["nonce"]) for body in batches] == [1, 0]  # handed out 1, re-signed 0
    assert json.loads(approval.relayer_payload) == batches[-1]
    assert _wallet_nonce(venue_control, trader.maker) == 1  # one batch ran
