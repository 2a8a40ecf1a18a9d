"""Connected polymarket.com accounts end to end (issue 16's "Done when"), against the shared
sandbox venue with its account rules on (``strict_accounts``): connect → onboarding →
the first live order (REST path) and the first live copy (copy engine) go through.

- A deposit wallet polymarket.com already deployed, connected with its owner key and the
  user's own Relayer API key: onboarding skips the deploy (``/deployed``), sends the
  approvals as a WALLET batch authenticated with the user's key (not the operator's builder
  key), derives the CLOB credentials with the owner, and orders go out as type 3.
- A plain EOA the operator allowlists (and the venue too) trades as type 0; one the venue
  does not allow is refused with the venue's own words, shown as the order's reason.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from eth_account import Account

from models import User
from models.wallet import AccountOnboarding, TradingWallet, WalletApproval, WalletDeployment
from services.platform import runtime
from services.trading import orders, previews
from services.wallets import onboarding, readiness, trading_accounts
from tests.worker.copy_engine.conftest import copy_one_fill
from venue.accounts import proxy_wallet_address, required_approvals, safe_wallet_address


@pytest.fixture
def strict_venue(venue_control: Any) -> Iterator[Any]:
    """The venue's account rules on for the test, back as they were after."""
    before = venue_control.state()["strict_accounts"]
    venue_control.call("POST", "/strict-accounts", {"enabled": True}, expect=200)
    yield venue_control
    venue_control.call("POST", "/strict-accounts", {"enabled": before}, expect=200)


@pytest.fixture
def allowlist() -> Iterator[Any]:
    """``allowlist(address)``: the operator's TRADING_EOA_ALLOWLIST holds ``address``."""
    previous = runtime.runtime()

    def allow(address: str) -> None:
        settings = replace(previous.settings, eoa_allowlist=(address.lower(),))
        runtime.install(replace(previous, settings=settings))

    yield allow
    runtime.install(previous)


def _live_order(user: Any, token: str) -> Any:
    quote = previews.create(user, token, "buy", "10", "market", None)
    return orders.place_order(user, token_id=token, side="buy", size="10",
                              order_type="market", preview_id=quote["preview_id"])


def _approved_before(control: Any, maker: str) -> None:
    """The maker's approvals, made on polymarket.com before the account was connected."""
    for approval in required_approvals(trading_accounts.contracts()):
        grant = ({"spender": approval.spender} if approval.method == "approve"
                 else {"operator": approval.spender, "approved": True})
        control.call("POST", "/approvals", {"owner": maker, "token": approval.token, **grant},
                     expect=200)


def _onboarded(wallet: TradingWallet) -> AccountOnboarding:
    row = onboarding.record(wallet)
    assert onboarding.run(row.id) == "ready", onboarding.status(wallet.user_id)["error"]
    return AccountOnboarding.get_by_id(row.id)


def _sent_by(venue_control: Any, maker: str) -> list[dict]:
    return [e["body"]["order"] for e in venue_control.received_orders()
            if e["body"]["order"]["maker"].lower() == maker.lower()]


def test_a_connected_deposit_wallet_with_its_own_relayer_key_orders_and_copies_live(
        strict_venue, make_config, run_engines, market, target, bound_db) -> None:
    control = strict_venue
    owner = Account.create()
    wallet = trading_accounts.deposit_wallet_of(owner.address)
    # polymarket.com deployed and registered it; the user minted a Relayer API key there.
    control.call("POST", "/deposit-wallets", {"wallet": wallet, "owner": owner.address},
                 expect=200)
    relayer_key = control.call("POST", "/relayer", {"relayer_key_for": owner.address,
                                                    "step_seconds": 0},
                               expect=200)["relayer_key"]
    user = User.create(email=f"{secrets.token_hex(6)}@example.com", tier="elite")
    # Pasted as people paste: the key without 0x and wrapped in spaces, the address in
    # lower case.
    connected = trading_accounts.connect(
        user, wallet_address=f" {wallet.lower()} ", private_key=f"  {owner.key.hex()[-64:]}\n",
        relayer_api_key=relayer_key, relayer_api_key_address=owner.address.lower())
    assert (connected.signature_type, connected.funder_address) == (3, wallet)
    assert trading_accounts.describe(connected)["relayer"] == "own_key"
    # Not onboarded yet: live trading is refused with the reason.
    assert readiness.readiness(user)["ready_to_trade"] is False

    done = _onboarded(connected)
    # Deployed already: nothing was created; the approvals went with the user's own key.
    assert not WalletDeployment.select().where(WalletDeployment.wallet == connected.id).exists()
    [batch] = control.get("/relayer/transaction", id=done.approvals_transaction_id)
    assert (batch["type"], batch["state"]) == ("WALLET", "STATE_CONFIRMED")
    assert batch["owner"] == relayer_key
    assert batch["from"].lower() == owner.address.lower()

    control.fund(wallet, "100", seen=False)  # a fresh deposit: the CLOB has not seen it
    onboarding.refresh_balance(user)
    ready = readiness.readiness(user)
    assert ready["ready_to_trade"], ready["blockers"]

    placed = _live_order(user, market.yes)
    assert placed.status == "matched", placed.error
    config = make_config(user, target)
    copy_one_fill(run_engines, control, config, target, market.yes)
    sent = _sent_by(control, wallet)
    assert len(sent) == 2
    assert {(o["signatureType"], o["signer"].lower()) for o in sent} == {(3, wallet.lower())}
    assert TradingWallet.get_by_id(connected.id).venue_api_key_sealed  # derived with the owner


def test_an_allowlisted_eoa_orders_and_copies_live_and_one_not_allowed_is_refused(
        strict_venue, allowlist, make_config, run_engines, market, target,
        bound_db) -> None:
    control = strict_venue
    key = Account.create()
    allowlist(key.address)
    control.call("POST", "/strict-accounts", {"allowlisted": [key.address]}, expect=200)
    user = User.create(email=f"{secrets.token_hex(6)}@example.com", tier="elite")
    eoa = trading_accounts.connect(user, wallet_address=key.address,
                                   private_key=key.key.hex())
    assert (eoa.signature_type, eoa.account_kind) == (0, "eoa")
    control.fund(key.address, "100")
    _approved_before(control, key.address)
    _onboarded(eoa)  # nothing to deploy; the venue sees the approvals; credentials
    assert readiness.readiness(user)["ready_to_trade"]
    placed = _live_order(user, market.yes)
    assert placed.status == "matched", placed.error
    config = make_config(user, target)
    copy_one_fill(run_engines, control, config, target, market.yes)
    assert {o["signatureType"] for o in _sent_by(control, key.address)} == {0}

    # The operator allowlisted it but the venue does not: the venue's words reach the user.
    other = Account.create()
    allowlist(other.address)
    someone = User.create(email=f"{secrets.token_hex(6)}@example.com", tier="elite")
    refused_eoa = trading_accounts.connect(someone, wallet_address=other.address,
                                           private_key=other.key.hex())
    control.fund(other.address, "100")
    _approved_before(control, other.address)
    _onboarded(refused_eoa)
    refused = _live_order(someone, market.yes)
    assert refused.status == "rejected"
    assert trading_accounts.EOA_REFUSED in refused.error


def test_a_grandfathered_proxy_orders_and_copies_live_as_type_1(
        strict_venue, make_config, run_engines, market, target, bound_db) -> None:
    control = strict_venue
    owner = Account.create()
    proxy = proxy_wallet_address(owner.address, trading_accounts.contracts())
    # A Magic/email account polymarket.com made (and approved) before deposit wallets; the
    # venue still takes it as a maker.
    control.call("POST", "/legacy-wallets", {"wallet": proxy, "owner": owner.address,
                                             "signature_type": 1}, expect=200)
    _approved_before(control, proxy)
    user = User.create(email=f"{secrets.token_hex(6)}@example.com", tier="elite")
    connected = trading_accounts.connect(user, wallet_address=proxy,
                                         private_key=owner.key.hex())
    assert (connected.signature_type, connected.funder_address) == (1, proxy)
    control.fund(proxy, "100", seen=False)
    done = _onboarded(connected)
    assert done.approvals_transaction_id is None
    assert onboarding.status(user)["deploy_transaction_id"] is None
    assert not WalletDeployment.select().where(WalletDeployment.wallet == connected.id).exists()
    ready = readiness.readiness(user)
    assert ready["ready_to_trade"] and ready["balance_usdc"] == 100, ready["blockers"]

    # Not grandfathered yet: the venue's own refusal.
    refused = _live_order(user, market.yes)
    assert refused.status == "rejected"
    assert trading_accounts.EOA_REFUSED in refused.error
    control.call("POST", "/strict-accounts", {"grandfathered": [proxy]}, expect=200)
    placed = _live_order(user, market.yes)
    assert placed.status == "matched", placed.error
    config = make_config(user, target)
    copy_one_fill(run_engines, control, config, target, market.yes)
    sent = _sent_by(control, proxy)
    assert {(o["signatureType"], o["signer"].lower()) for o in sent} == {
        (1, owner.address.lower())}
    assert len(sent) == 3


def _legacy_account(control: Any, signature_type: int, owner: Any = None, **connect: Any
                    ) -> tuple[Any, str, Any, TradingWallet]:
    """A grandfathered proxy (1) or Safe (2) polymarket.com made and never approved,
    funded, connected by a new user: (owner, wallet, user, connected)."""
    owner = owner or Account.create()
    derive = proxy_wallet_address if signature_type == 1 else safe_wallet_address
    wallet = derive(owner.address, trading_accounts.contracts())
    control.call("POST", "/legacy-wallets", {"wallet": wallet, "owner": owner.address,
                                             "signature_type": signature_type}, expect=200)
    control.call("POST", "/strict-accounts", {"grandfathered": [wallet]}, expect=200)
    control.fund(wallet, "100", seen=False)
    user = User.create(email=f"{secrets.token_hex(6)}@example.com", tier="elite")
    connected = trading_accounts.connect(user, wallet_address=wallet,
                                         private_key=owner.key.hex(), **connect)
    assert (connected.signature_type, connected.funder_address) == (signature_type, wallet)
    return owner, wallet, user, connected


@pytest.mark.parametrize("signature_type", [1, 2])
def test_a_proxy_or_safe_without_approvals_gets_them_through_the_relayer_and_trades_live(
        strict_venue, market, bound_db, signature_type) -> None:
    """Items 1-2 of issue 16 for types 1 and 2: onboarding reads what is missing and sends
    it as ONE PROXY / SAFE relayer transaction signed by the owner (the Safe's with the
    user's own Relayer API key, the proxy's with the operator's builder key); then the
    strict venue takes a live order as the wallet."""
    control = strict_venue
    control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    owner = Account.create()
    own_key = {}
    if signature_type == 2:
        relayer_key = control.call("POST", "/relayer", {"relayer_key_for": owner.address},
                                   expect=200)["relayer_key"]
        own_key = {"relayer_api_key": relayer_key, "relayer_api_key_address": owner.address}
    owner, wallet, user, connected = _legacy_account(control, signature_type, owner,
                                                     **own_key)
    kind = {1: "PROXY", 2: "SAFE"}[signature_type]
    # The venue sees no approvals: an order now is refused for allowance.
    assert onboarding.missing_approvals(connected)
    done = _onboarded(connected)
    [sent] = control.get("/relayer/transaction", id=done.approvals_transaction_id)
    assert (sent["type"], sent["state"]) == (kind, "STATE_CONFIRMED")
    assert sent["from"].lower() == owner.address.lower()
    assert sent["proxyAddress"].lower() == wallet.lower()
    assert sent["owner"] == (own_key["relayer_api_key"] if own_key
                             else trading_accounts.builder_credentials().api_key)
    granted = control.call("GET", f"/accounts/{wallet}", expect=200)
    assert len(granted["allowances"]) + len(granted["operators"]) == len(
        required_approvals(trading_accounts.contracts()))
    ready = readiness.readiness(user)
    assert ready["ready_to_trade"] and ready["balance_usdc"] == 100, ready["blockers"]

    placed = _live_order(user, market.yes)
    assert placed.status == "matched", placed.error
    assert {(o["signatureType"], o["signer"].lower()) for o in _sent_by(control, wallet)} == {
        (signature_type, owner.address.lower())}
    # Idempotent: onboarding again reads the approvals in place and sends nothing.
    row = AccountOnboarding.get_by_id(done.id)
    row.status, row.step = "failed", "approvals"
    row.approvals_transaction_id = None
    row.save()
    sent_before = WalletApproval.select().where(WalletApproval.wallet == connected.id).count()
    assert control.get("/relayer/nonce", address=owner.address, type=kind) == {"nonce": "1"}
    assert onboarding.run(row.id) == "ready"
    assert AccountOnboarding.get_by_id(row.id).approvals_transaction_id is None
    assert WalletApproval.select().where(WalletApproval.wallet == connected.id).count() == (
        sent_before)
    assert control.get("/relayer/nonce", address=owner.address, type=kind) == {"nonce": "1"}


def test_a_failed_or_refused_safe_approval_shows_the_relayers_reason_and_a_retry_works(
        strict_venue, market, bound_db) -> None:
    control = strict_venue
    control.call("POST", "/relayer", {"step_seconds": 0, "fail_next": {
        "state": "FAILED", "message": "out of gas (sandbox)"}}, expect=200)
    owner, _wallet, user, connected = _legacy_account(control, 2)
    row = onboarding.record(connected)
    assert onboarding.run(row.id) == "failed"
    status = onboarding.status(user)
    assert status["error"] == ("The relayer ended the transaction STATE_FAILED: "
                               "out of gas (sandbox). Nothing was sent; try again.")
    assert [s["state"] for s in status["steps"]][:2] == ["done", "failed"]
    assert control.get("/relayer/nonce", address=owner.address, type="SAFE") == {"nonce": "0"}

    # The relayer refuses the next submit outright (quota): its words, nothing recorded.
    control.call("POST", "/relayer", {"quota": True}, expect=200)
    try:
        assert onboarding.run(row.id) == "failed"
    finally:
        control.call("POST", "/relayer", {"quota": False}, expect=200)
    assert "quota exceeded" in onboarding.status(user)["error"]
    assert AccountOnboarding.get_by_id(row.id).approvals_transaction_id is None

    assert onboarding.run(row.id) == "ready", onboarding.status(user)["error"]
    assert control.get("/relayer/nonce", address=owner.address, type="SAFE") == {"nonce": "1"}
    placed = _live_order(user, market.yes)
    assert placed.status == "matched", placed.error
