"""Issue 16, items 2-3: native USDC at the maker address is reported (a warning, never a
trade blocker), and an allowlisted plain EOA's missing approvals are sent from the EOA
itself, on chain, exactly once."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from flask import render_template

from chain.errors import ChainUnavailable
from models.wallet import AccountOnboarding, TradingWallet, WalletApproval, WalletTransaction
from schemas.configs import ReadinessSchema
from services.platform import runtime
from services.wallets import onboarding, readiness, trading_accounts, wallet_transactions
from tests.services.wallets.test_trading_accounts import use_settings
from tests.wallet_fixtures import chain_settings, use_chain
from venue.signing import OrderKey

ONE_USDC = 10**6


def test_native_usdc_is_reported_and_blocks_nothing_while_pusd_is_there(
        app: Any, trader: Any, wallet_chain: Any) -> None:
    dev = wallet_chain.contracts
    before = readiness.readiness(trader.user)
    assert before["usdc_native"] == 0
    assert "native_usdc" not in [b["code"] for b in before["blockers"]]
    dev.mint(dev.native_usdc, trader.maker, 7 * ONE_USDC + 250_000)
    ready = readiness.readiness(trader.user)
    assert ready["usdc_native"] == Decimal("7.25")
    native = [b for b in ready["blockers"] if b["code"] == "native_usdc"]
    assert native and native[0]["message"].startswith("7.25 USDC (native) cannot be traded; "
                                                      "swap it to USDC.e or pUSD")
    # A warning: the same trade blockers with and without it.
    assert ready["ready_to_trade"] == before["ready_to_trade"]
    assert ready["balance_usdc"] == 1000
    # The account status shows it: over the API (the schema) and on the dashboard, where a
    # warning is listed even when the account is ready.
    assert ReadinessSchema().dump(ready)["usdc_native"] == "7.25"
    with app.test_request_context():
        page = render_template("dashboard/_readiness.html",
                               readiness={**ready, "ready_to_trade": True, "blockers": native})
    assert 'data-code="native_usdc"' in page and "7.25 USDC (native)" in page


@pytest.fixture
def allowlisted_eoa(app: Any, wallet_chain: Any, venue_control: Any, user: Any
                    ) -> Iterator[TradingWallet]:
    """A plain EOA the operator allowlisted, connected with a fresh key and no POL."""
    previous = runtime.runtime()
    key = OrderKey("0x" + secrets.token_hex(32))
    use_settings(app, wallet_chain, TRADING_EOA_ALLOWLIST=key.address)
    yield trading_accounts.connect(user, wallet_address=key.address,
                                   private_key=key.private_key)
    runtime.install(previous)


def _approvals_sent(wallet: TradingWallet) -> list[WalletTransaction]:
    return list(WalletTransaction.select().where((WalletTransaction.wallet == wallet.id)
                                                 & (WalletTransaction.kind == "approval")))


def test_an_allowlisted_eoa_sends_its_missing_approvals_once_paying_pol(
        app: Any, allowlisted_eoa: TradingWallet, wallet_chain: Any) -> None:
    wallet = allowlisted_eoa
    row = onboarding.record(wallet)
    # Without a chain there is nowhere to send them: the step says so.
    with_chain = runtime.runtime()
    use_chain(chain_settings(app, wallet_chain, POLYGON_RPC_URL=""))
    assert onboarding.run(row.id) == "failed"
    assert "No chain is configured" in onboarding.status(wallet.user_id)["error"]
    runtime.install(with_chain)
    missing = onboarding.missing_approvals(wallet)
    assert len(missing) >= 2  # pUSD approve and CTF setApprovalForAll, at least
    # No POL: the step fails with the gas it needs, nothing is stored or sent.
    assert onboarding.run(row.id) == "failed"
    status = onboarding.status(wallet.user_id)
    assert "too little MATIC to pay gas" in status["error"]
    assert [s["state"] for s in status["steps"]][:2] == ["done", "failed"]
    assert _approvals_sent(wallet) == []
    wallet_chain.contracts.fund_native(wallet.address, 10**18)
    assert onboarding.run(row.id) == "ready", onboarding.status(wallet.user_id)["error"]
    sent = _approvals_sent(wallet)
    assert sorted(tx.to_address for tx in sent) == sorted(a.token for a in missing)
    assert {tx.status for tx in sent} == {"confirmed"}
    # each went through the one lifecycle: a durable row per approval, linked to its
    # transaction (the earlier attempt without POL is a failed row that sent nothing)
    rows = list(WalletApproval.select().where(WalletApproval.wallet == wallet.id))
    linked = {r.transaction_id: r.status for r in rows if r.transaction_id is not None}
    assert linked == {tx.id: "confirmed" for tx in sent}
    assert {r.status for r in rows if r.transaction_id is None} <= {"failed"}
    assert onboarding.missing_approvals(wallet) == []  # read back from the chain
    assert wallet_chain.web3().eth.get_balance(wallet.address) < 10**18  # it paid the gas
    # Onboarding the account again sends nothing: the allowances are read first.
    AccountOnboarding.update(status="pending", step="approvals").where(
        AccountOnboarding.id == row.id).execute()
    assert onboarding.run(row.id) == "ready"
    assert len(_approvals_sent(wallet)) == len(sent)


def test_an_eoa_approval_stored_but_not_sent_by_a_crashed_run_is_sent_once(
        allowlisted_eoa: TradingWallet, wallet_chain: Any, monkeypatch: Any) -> None:
    wallet = allowlisted_eoa
    wallet_chain.contracts.fund_native(wallet.address, 10**18)
    missing = onboarding.missing_approvals(wallet)
    real_send = wallet_transactions.send_raw
    calls = []

    def rpc_gone_once(w3: Any, raw: Any) -> str:
        calls.append(raw)
        if len(calls) == 1:
            raise ChainUnavailable("the RPC went away after the transaction was stored")
        return real_send(w3, raw)

    monkeypatch.setattr(wallet_transactions, "send_raw", rpc_gone_once)
    row = onboarding.record(wallet)
    assert onboarding.run(row.id) == "failed"
    [stored] = _approvals_sent(wallet)
    assert stored.status == "signed"  # recorded before the broadcast that failed
    assert onboarding.run(row.id) == "ready", onboarding.status(wallet.user_id)["error"]
    sent = _approvals_sent(wallet)
    # The stored one was broadcast again and mined first; it was not approved twice.
    assert len(sent) == len(missing) and {tx.status for tx in sent} == {"confirmed"}
    assert stored.id in {tx.id for tx in sent}
    assert onboarding.missing_approvals(wallet) == []
