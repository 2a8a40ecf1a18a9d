"""The onboarding's approvals go through the one wallet lifecycle (issue 26): each send is
a durable ``WalletApproval`` row (models/wallet.py), signed once, stored, sent and followed
like a withdrawal's; a run that died after the relayer took the approvals is followed by
the next run, which never signs a second batch. (A plain EOA's approvals, one on-chain
transaction per row, are in tests/services/wallets/test_account_funding_checks.py; the upgrade that
moved an onboarding's own approvals batch into these rows is in
tests/services/wallets/test_deployment_lifecycle.py.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

from models.wallet import AccountOnboarding, TradingWallet, WalletApproval
from services.wallets import onboarding, wallet_batches
from tests.services.wallets.test_relayer_legacy_accounts import legacy_account

KIND = {1: "PROXY", 2: "SAFE"}


def _rows(wallet: TradingWallet) -> list[WalletApproval]:
    return list(WalletApproval.select().where(WalletApproval.wallet == wallet.id))


@pytest.mark.parametrize("signature_type", [1, 2])
def test_approvals_sent_then_a_crash_are_followed_by_the_next_run_never_signed_twice(
        venue_control, bound_db, monkeypatch, signature_type) -> None:
    wallet, owner = legacy_account(venue_control, signature_type)
    row = onboarding.record(wallet)

    def died(self: Any, transaction_id: str) -> None:
        raise SystemExit("killed after the relayer took the approvals")

    monkeypatch.setattr(wallet_batches.BatchRow, "store_id", died)
    with pytest.raises(SystemExit):
        onboarding.run(row.id)
    monkeypatch.undo()
    [sent] = _rows(wallet)
    assert sent.status == "signed" and sent.relayer_payload and not sent.relayer_transaction_id
    payload = json.loads(sent.relayer_payload)
    assert payload["type"] == KIND[signature_type]
    # the dead run's onboarding lease runs out
    AccountOnboarding.update(lease_until=None).where(AccountOnboarding.id == row.id).execute()

    assert onboarding.run(row.id) == "ready", onboarding.status(wallet.user_id)["error"]
    [done] = _rows(wallet)  # the same row, followed: no second batch
    assert done.id == sent.id and done.status == "confirmed"
    assert json.loads(done.relayer_payload) == payload
    assert done.relayer_transaction_id and done.relayer_transaction_hash
    assert onboarding.status(wallet.user_id)["approvals_transaction_id"] == (
        done.relayer_transaction_id)
    assert venue_control.get("/relayer/nonce", address=owner, type=KIND[signature_type]) == {
        "nonce": "1"}


def test_a_failed_approvals_batch_is_a_failed_row_and_the_retry_makes_a_new_one(
        venue_control, bound_db) -> None:
    wallet, _owner = legacy_account(venue_control, 2)
    venue_control.call("POST", "/relayer", {"fail_next": {
        "state": "FAILED", "message": "out of gas (sandbox)"}}, expect=200)
    row = onboarding.record(wallet)
    assert onboarding.run(row.id) == "failed"
    [failed] = _rows(wallet)
    assert failed.status == "failed" and "out of gas (sandbox)" in failed.error
    assert onboarding.run(row.id) == "ready", onboarding.status(wallet.user_id)["error"]
    assert sorted(r.status for r in _rows(wallet)) == ["confirmed", "failed"]

