"""Trading accounts (issue 16): deposit wallets by onboarding, connecting an existing account
(classified like the SDK, every bad input a 400 naming its field), the live gate, and
onboarding's failure modes (builder key missing, relayer down or FAILED) leaving a step
failed with the reason and retryable, never half-recorded."""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Iterator
from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest

import config
from models.wallet import AccountOnboarding, TradingWallet, WalletDeployment
from services.platform import errors, runtime, venue_access
from services.wallets import onboarding, trading_accounts, wallets
from tests.conftest import app_settings
from tests.local_http import serving
from tests.venue.test_relayer_client import Relayer
from tests.wallet_fixtures import chain_settings, use_chain
from venue.accounts import (
    beacon_deposit_wallet_address,
    proxy_wallet_address,
    uups_deposit_wallet_address,
)
from venue.signing import OrderKey

KEY = "0x" + "42" * 32
OWNER = OrderKey(KEY).address
# The secp256k1 group order: a private key is an integer in [1, N - 1].
CURVE_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
# A Relayer API key as polymarket.com issues it: a UUID (the relayer API reference's example).
RELAYER_KEY = "01967c03-b8c8-7000-8f68-8b8eaec6fd3d"
BUILDER = {"POLYMARKET_BUILDER_API_KEY": "bk", "POLYMARKET_BUILDER_PASSPHRASE": "pp",
           "POLYMARKET_BUILDER_SECRET": base64.urlsafe_b64encode(b"k" * 32).decode()}


def use_settings(app: Any, chain: Any, **extra: Any) -> None:
    """Point the runtime's settings, venue and chain at the dev chain plus ``extra``."""
    overrides = {**app_settings(app).flat(), **chain.contracts.env(), **extra}
    settings = config.load(env={}, overrides=overrides)
    current = runtime.runtime()
    runtime.install(replace(current, settings=settings,
                            venue=venue_access.VenueAccess(venue_access.venue_config(settings))))
    use_chain(chain_settings(app, chain, **extra))


@pytest.fixture
def accounts(app: Any, wallet_chain: Any) -> Iterator[Any]:
    previous = runtime.runtime()
    use_settings(app, wallet_chain, **BUILDER)
    yield wallet_chain
    runtime.install(previous)


def _fields(exc: pytest.ExceptionInfo[errors.ValidationFailed]) -> set[str]:
    return set(exc.value.fields)


def test_connect_refuses_each_bad_input_naming_its_field(accounts, user) -> None:
    wallet = beacon_deposit_wallet_address(OWNER, trading_accounts.contracts())
    cases = [
        ({"private_key": "0x1234"}, "private_key"),
        # 64 hex digits, but no key: zero, the group order, and above it.
        ({"private_key": "0x" + "00" * 32}, "private_key"),
        ({"private_key": f"0x{CURVE_ORDER:064x}"}, "private_key"),
        ({"private_key": "ff" * 32}, "private_key"),
        ({"wallet_address": "0x" + "1" * 39}, "wallet_address"),
        # Mixed case with a broken checksum is a typo, not an address.
        ({"wallet_address": wallet[:2] + wallet[2:].swapcase()}, "wallet_address"),
        # A wallet the key does not control.
        ({"wallet_address": "0x" + "ab" * 20}, "private_key"),
        # A plain EOA that is not allowlisted: the venue's own words.
        ({"wallet_address": OWNER}, "wallet_address"),
        ({"relayer_api_key": "rk"}, "relayer_api_key_address"),
        ({"relayer_api_key": "rk", "relayer_api_key_address": "0x" + "cd" * 20},
         "relayer_api_key_address"),
        # Not a Relayer API key's shape (a UUID): a typo, another secret, or a huge paste.
        ({"relayer_api_key": "rk-secret", "relayer_api_key_address": OWNER}, "relayer_api_key"),
        ({"relayer_api_key": RELAYER_KEY + "0", "relayer_api_key_address": OWNER},
         "relayer_api_key"),
        ({"relayer_api_key": RELAYER_KEY.replace("-", ""), "relayer_api_key_address": OWNER},
         "relayer_api_key"),
        ({"relayer_api_key": "a" * 100_000, "relayer_api_key_address": OWNER},
         "relayer_api_key"),
    ]
    for change, field in cases:
        args = {"wallet_address": wallet, "private_key": KEY, **change}
        with pytest.raises(errors.ValidationFailed) as refused:
            trading_accounts.connect(user, **args)
        assert _fields(refused) == {field}, change
    with pytest.raises(errors.ValidationFailed) as eoa:
        trading_accounts.connect(user, wallet_address=OWNER, private_key=KEY)
    assert trading_accounts.EOA_REFUSED in eoa.value.fields["wallet_address"][0]
    assert wallets.for_user(user) is None  # nothing half-written


def test_connect_classifies_seals_and_refuses_a_second_account(accounts, user) -> None:
    contracts = trading_accounts.contracts()
    uups = uups_deposit_wallet_address(OWNER, contracts)
    # Pasted as people paste: spaces, a newline, no 0x, the address in lower case.
    connected = trading_accounts.connect(
        user, wallet_address=f"  {uups.lower()} ", private_key=f" {KEY[2:]}\n",
        relayer_api_key=f" {RELAYER_KEY}\n", relayer_api_key_address=OWNER.lower())
    assert (connected.signature_type, connected.funder_address) == (3, uups)
    assert (connected.address, connected.account_kind) == (OWNER, "connected")
    stored = TradingWallet.get_by_id(connected.id)
    assert KEY[2:] not in stored.private_key_sealed
    assert RELAYER_KEY not in (stored.relayer_api_key_sealed or "")
    auth = trading_accounts.relayer_auth(stored)
    assert (auth.key, auth.address) == (RELAYER_KEY, OWNER)
    assert RELAYER_KEY not in json.dumps(trading_accounts.describe(stored))
    with pytest.raises(errors.Conflict):
        trading_accounts.connect(user, wallet_address=uups, private_key=KEY)


def test_the_largest_key_on_the_curve_connects(accounts, user) -> None:
    key = f"0x{CURVE_ORDER - 1:064x}"  # in range: never refused as out of range
    wallet = beacon_deposit_wallet_address(OrderKey(key).address, trading_accounts.contracts())
    connected = trading_accounts.connect(user, wallet_address=wallet, private_key=key)
    assert connected.address == OrderKey(key).address


def test_connect_a_grandfathered_proxy_and_an_allowlisted_eoa(app, accounts, user,
                                                             bound_db) -> None:
    from models import User

    proxy = proxy_wallet_address(OWNER, trading_accounts.contracts())
    connected = trading_accounts.connect(user, wallet_address=proxy, private_key=KEY)
    assert (connected.signature_type, connected.funder_address) == (1, proxy)
    use_settings(app, accounts, TRADING_EOA_ALLOWLIST=OWNER.lower(), **BUILDER)
    other = User.create(email="eoa@example.com")
    with pytest.raises(errors.Conflict):  # the same signer key is already connected
        trading_accounts.connect(other, wallet_address=OWNER, private_key=KEY)
    fresh = OrderKey("0x" + "43" * 32)
    use_settings(app, accounts, TRADING_EOA_ALLOWLIST=fresh.address, **BUILDER)
    eoa = trading_accounts.connect(other, wallet_address=fresh.address,
                                   private_key=fresh.private_key)
    assert (eoa.signature_type, eoa.funder_address, eoa.account_kind) == (0, None, "eoa")
    assert trading_accounts.live_blockers(eoa) != []  # not onboarded yet


def test_a_deposit_wallet_trades_live_only_once_onboarded(accounts, user) -> None:
    wallet = wallets.get_or_create(user)  # every new wallet is a deposit wallet
    assert wallet.signature_type == 3 and wallet.account_kind == "deposit_wallet"
    assert wallet.funder_address == beacon_deposit_wallet_address(
        wallet.address, trading_accounts.contracts())
    assert wallets.deposit_address(user)["address"] == wallet.funder_address
    with pytest.raises(errors.AccountNotReady) as refused:
        trading_accounts.require_live(user)
    assert refused.value.status == 409 and refused.value.code == "wallet_error"
    assert refused.value.details["blockers"][0]["code"] == "onboarding_incomplete"
    # Its onboarding was queued by the wallet's creation (the worker runs it).
    [row] = AccountOnboarding.select().where(AccountOnboarding.wallet == wallet.id)
    assert row.status == "pending"
    # the refusal says what is happening and how to follow it, not what to run
    assert "being set up for the venue" in refused.value.message
    assert "GET /api/trading-account" in refused.value.message
    AccountOnboarding.update(status="failed", step="approvals", error="the relayer is down").where(
        AccountOnboarding.id == row.id).execute()
    with pytest.raises(errors.AccountNotReady) as failed:
        trading_accounts.require_live(user)
    assert "stopped at approvals: the relayer is down" in failed.value.message
    assert "POST /api/trading-account/onboarding" in failed.value.message
    AccountOnboarding.update(status="ready", step="done").where(
        AccountOnboarding.id == row.id).execute()
    trading_accounts.require_live(user)


def test_onboarding_without_builder_credentials_fails_with_the_reason(app, accounts,
                                                                     user) -> None:
    use_settings(app, accounts, **dict.fromkeys(BUILDER, ""))  # no builder key
    wallet = wallets.get_or_create_deposit_wallet(user)
    row = onboarding.record(wallet)
    assert onboarding.run(row.id) == "failed"
    status = onboarding.status(user)
    assert status["error"] == onboarding.BUILDER_MISSING
    assert [step["state"] for step in status["steps"]] == ["failed", "pending", "pending",
                                                           "pending"]
    assert _deployments(wallet) == []  # nothing recorded, nothing sent


@pytest.fixture
def relayer(app: Any, accounts: Any) -> Iterator[Relayer]:
    fake = Relayer()
    with serving(fake.handler()) as url:
        use_settings(app, accounts, POLYMARKET_RELAYER_URL=f"{url}/relayer", **BUILDER)
        yield fake


def _deployments(wallet: TradingWallet) -> list[WalletDeployment]:
    return list(WalletDeployment.select().where(WalletDeployment.wallet == wallet.id)
                .order_by(WalletDeployment.created_at))


def _create_body(wallet: TradingWallet) -> dict[str, str]:
    return {"type": "WALLET-CREATE", "from": wallet.address,
            "to": trading_accounts.contracts().deposit_wallet_factory,
            "metadata": "copytrade deposit wallet"}


def test_a_failed_deployment_is_recorded_and_retried_afresh(relayer, user) -> None:
    wallet = wallets.get_or_create_deposit_wallet(user)
    row = onboarding.record(wallet)
    relayer.answer("/relayer/deployed", (200, {"deployed": False}))
    relayer.answer("/relayer/submit", (200, {"transactionID": "tx-1", "state": "STATE_NEW"}))
    relayer.answer("/relayer/v1/account/transactions/tx-1",
                   (200, {"transaction_id": "tx-1", "state": "STATE_FAILED",
                          "error_msg": "wallet registration failed"}))
    assert onboarding.run(row.id) == "failed"
    failed = AccountOnboarding.get_by_id(row.id)
    assert "STATE_FAILED" in failed.error and "wallet registration failed" in failed.error
    assert failed.lease_owner is None
    # The failure had no effect: its row is final, the retry makes a new one.
    [attempt] = _deployments(wallet)
    assert (attempt.status, attempt.relayer_transaction_id) == ("failed", "tx-1")
    assert relayer.submits() == [_create_body(wallet)]
    relayer.answer("/relayer/submit", (200, {"transactionID": "tx-2", "state": "STATE_NEW"}))
    relayer.answer("/relayer/v1/account/transactions/tx-2",
                   (200, {"transaction_id": "tx-2", "state": "STATE_CONFIRMED"}))
    onboarding.run(row.id)
    assert AccountOnboarding.get_by_id(row.id).step != "deploy"
    assert [(d.status, d.relayer_transaction_id) for d in _deployments(wallet)] == [
        ("failed", "tx-1"), ("confirmed", "tx-2")]
    assert relayer.submits() == [_create_body(wallet)] * 2
    assert onboarding.status(user)["deploy_transaction_id"] == "tx-2"


def test_a_relayer_that_is_down_leaves_the_deployment_open_and_resends_only_its_body(
        relayer, user) -> None:
    wallet = wallets.get_or_create_deposit_wallet(user)
    row = onboarding.record(wallet)
    relayer.answer("/relayer/deployed", (200, {"deployed": False}))
    relayer.answer("/relayer/submit", (500, {"error": "internal error"}))
    assert onboarding.run(row.id) == "failed"
    failed = AccountOnboarding.get_by_id(row.id)
    assert "answer was lost" in failed.error
    # The submit may have been acted on: the row keeps its body, never "nothing was sent".
    [open_row] = _deployments(wallet)
    assert open_row.status == "ambiguous" and open_row.relayer_transaction_id is None
    assert json.loads(open_row.relayer_payload) == _create_body(wallet)
    # Neither listed by the relayer nor deployed: the retry resends the stored body as it is.
    assert onboarding.run(row.id) == "failed"
    assert relayer.submits() == [_create_body(wallet)] * 2
    assert [d.id for d in _deployments(wallet)] == [open_row.id]
    # Once /deployed says the wallet exists, the deployment ran: the step is done without
    # another submit.
    relayer.answer("/relayer/deployed", (200, {"deployed": True}))
    onboarding.run(row.id)
    assert AccountOnboarding.get_by_id(row.id).step != "deploy"
    assert len(relayer.submits()) == 2
    assert WalletDeployment.get_by_id(open_row.id).status == "confirmed"


def test_two_runs_at_once_deploy_once(relayer, user) -> None:
    wallet = wallets.get_or_create_deposit_wallet(user)
    row = onboarding.record(wallet)
    assert onboarding._take_lease(row.id, "first")
    # A second run while the first holds the lease does nothing.
    assert onboarding.run(row.id) == "running"
    assert relayer.seen == []


def test_a_new_user_onboards_against_the_sandbox_and_trades_as_a_deposit_wallet(
        make_trader, market, venue_control) -> None:
    """Sign up → onboarding (deploy, approvals, credentials, balance update) → fund the
    deposit wallet → a live order with the venue's deposit-wallet-only rule on."""
    from services.trading import orders, previews

    trader = make_trader("100", deposit_wallet=True)
    status = onboarding.status(trader.user)
    assert status["ready"] and [s["state"] for s in status["steps"]] == ["done"] * 4
    assert status["deploy_transaction_id"] and status["approvals_transaction_id"]
    maker = trader.wallet.funder_address
    from services.wallets import readiness

    ready = readiness.readiness(trader.user)
    assert ready["ready_to_trade"], ready["blockers"]
    assert ready["allowance_ok"] is True and ready["balance_usdc"] == 100
    assert ready["wallet_address"] == maker
    # The venue's rules (the shared sandbox's, always on): deposit-wallet makers only,
    # registered wallets, balance and allowance checked against the CLOB's cache.
    assert venue_control.state()["strict_accounts"] is True
    quote = previews.create(trader.user, market.yes, "buy", "10", "market", None)
    order = orders.place_order(trader.user, token_id=market.yes, side="buy", size="10",
                               order_type="market", preview_id=quote["preview_id"])
    assert order.status == "matched", order.error
    assert venue_control.balances(maker)["positions"] == {market.yes: "10"}
    # Onboarding again is a no-op: ready stays ready, nothing is resubmitted.
    assert onboarding.run(onboarding.record(trader.wallet).id) == "ready"


def test_readiness_names_each_missing_step_of_a_new_deposit_wallet(user, venue_control
                                                                  ) -> None:
    from services.wallets import readiness

    wallets.get_or_create_deposit_wallet(user)
    ready = readiness.readiness(user)
    codes = [b["code"] for b in ready["blockers"]]
    assert "onboarding_incomplete" in codes and "wallet_not_deployed" in codes
    assert ready["ready_to_trade"] is False
    assert ready["onboarding"]["steps"][0] == {"name": "deploy",
                                               "title": onboarding.STEP_TITLES["deploy"],
                                               "state": "pending"}


def test_a_plain_eoa_not_allowlisted_gets_the_venues_refusal(user, market, venue_control,
                                                            eoa_allowlist) -> None:
    from services.trading import orders, previews

    # The operator allowlisted the EOA, the venue did not: the venue's words reach the user.
    key = OrderKey("0x" + secrets.token_hex(32))
    eoa_allowlist(key.address)
    trading_accounts.connect(user, wallet_address=key.address, private_key=key.private_key)
    venue_control.fund(key.address, "100")
    quote = previews.create(user, market.yes, "buy", "10", "market", None)
    order = orders.place_order(user, token_id=market.yes, side="buy", size="10",
                               order_type="market", preview_id=quote["preview_id"])
    assert order.status == "rejected"
    assert trading_accounts.EOA_REFUSED in order.error


def test_usdc_e_is_wrapped_into_pusd_once_through_the_relayer(make_trader,
                                                             venue_control) -> None:
    from services.wallets import collateral, readiness

    trader = make_trader("100", deposit_wallet=True)
    maker = trader.wallet.funder_address
    venue_control.call("POST", "/fund", {"address": maker, "usdc_e": "25"}, expect=200)
    assert "usdce_to_wrap" not in readiness.readiness(trader.user)  # no chain: unknown
    with pytest.raises(errors.ValidationFailed):
        collateral.request_wrap(trader.user, "1.0000001")
    row = collateral.request_wrap(trader.user, "25")
    assert collateral.run(row.id) == "confirmed"
    assert collateral.run(row.id) == "confirmed"  # again: nothing is sent twice
    done = collateral.get(trader.user, row.id)
    assert done.transaction_id and done.error is None
    assert venue_control.balances(maker)["pusd"] == "125"
    assert readiness.readiness(trader.user)["balance_usdc"] == 125
    # More than the wallet holds: the batch reverts, the wrap fails with the reason.
    short = collateral.request_wrap(trader.user, "5")
    assert collateral.run(short.id) == "failed"
    assert collateral.get(trader.user, short.id).error


def test_a_session_key_connects_only_while_the_wallet_accepts_it(accounts, user) -> None:
    """A session key does not derive the wallet; the wallet's ERC-1271 answer to a signed
    challenge order proves it (on the dev chain's own deposit wallet)."""
    from tests.devstack.chain.test_deposit_wallet import Wallet, _now

    deposit = Wallet(accounts)
    session, stranger = OrderKey("0x" + "44" * 32), OrderKey("0x" + "45" * 32)
    with pytest.raises(errors.ValidationFailed) as unknown:
        trading_accounts.connect(user, wallet_address=deposit.address,
                                 private_key=session.private_key)
    assert _fields(unknown) == {"private_key"}
    assert "session signer" in unknown.value.fields["private_key"][0]
    deposit.run([deposit.call_data("DepositWallet", deposit.address, "authorizeSessionSigner",
                                   session.address, _now(accounts) + 86_400)])
    with pytest.raises(errors.ValidationFailed):
        trading_accounts.connect(user, wallet_address=deposit.address,
                                 private_key=stranger.private_key)
    connected = trading_accounts.connect(user, wallet_address=deposit.address,
                                         private_key=session.private_key)
    assert (connected.signature_type, connected.funder_address) == (3, deposit.address)
    assert connected.session_signer is True and connected.address == session.address
    assert trading_accounts.describe(connected)["session_key"] is True
    from services.wallets import withdrawals

    with pytest.raises(errors.AccountNotReady) as no_withdrawal:  # a session key cannot
        withdrawals.request(user, "0x" + "12" * 20, "1", "usdc")
    assert "cannot withdraw" in no_withdrawal.value.message
    from services.wallets import collateral

    # Nor wrap: a session key is authorized for trading only; its owner wraps.
    with pytest.raises(errors.AccountNotReady) as no_wrap:
        collateral.request_wrap(user, "5")
    assert no_wrap.value.details["blockers"][0]["code"] == "session_key_cannot_wrap"
    assert collateral.auto_wrap(connected, Decimal(5)) is None
    assert collateral.offer(user)["available"] is False
    # Orders are signed in the session-signer envelope, and the wallet accepts them.
    from services.wallets import session_keys

    contracts = trading_accounts.contracts()
    assert session_keys.accepts(deposit.address, session, contracts)
    deposit.run([deposit.call_data("DepositWallet", deposit.address, "revokeSessionSigner",
                                   session.address)])
    assert not session_keys.accepts(deposit.address, session, contracts)


def test_a_session_key_is_refused_with_the_reason_when_no_chain_can_tell(user) -> None:
    wallet = "0x" + "ab" * 20
    with pytest.raises(errors.ValidationFailed) as refused:
        trading_accounts.connect(user, wallet_address=wallet, private_key=KEY)
    assert "no chain RPC is configured" in refused.value.fields["private_key"][0]


def test_onboarding_reads_the_approvals_on_chain_and_sends_only_the_missing(accounts,
                                                                            user) -> None:
    """A connected deposit wallet that approved some spenders already (on the dev chain)."""
    from tests.devstack.chain.test_deposit_wallet import Wallet

    deposit = Wallet(accounts)
    connected = trading_accounts.connect(user, wallet_address=deposit.address,
                                         private_key="0x" + bytes(deposit.owner.key).hex())
    before = onboarding.missing_approvals(connected)
    assert before  # a fresh wallet has granted nothing
    granted = before[0]
    deposit.run([(granted.token, 0, bytes.fromhex(granted.calldata()[2:]))])
    assert onboarding.missing_approvals(connected) == before[1:]
