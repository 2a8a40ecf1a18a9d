"""A trading account's setup starts by itself (issue 44): an API user who signs in and goes
straight to trading never has to ask for the deposit address first. The first sign-in (or
an API key's first use) makes the deposit wallet and queues its onboarding once, however
many requests come at once; a live trade starts it too (its 409 says the setup is under way
and how to follow it); an account whose wallet exists but whose setup nobody started
catches up at its next sign-in."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable

from models.user import User
from models.wallet import (
    SIGNATURE_TYPE_DEPOSIT_WALLET,
    AccountOnboarding,
    ReplacedWallet,
    TradingWallet,
)
from services.platform import jobs
from services.wallets import account_setup, onboarding_queue, trading_accounts, wallets
from tests.api.oauth_flow import bearer, obtain_tokens
from tests.api.test_oauth import api_resource
from tests.conftest import DEADLINE, step_up_headers
from tests.dashboard.conftest import job_prefix, worker_host  # noqa: F401 (fixtures)
from tests.mail_inbox import sign_in_over_rest
from venue.accounts import beacon_deposit_wallet_address
from venue.signing import OrderKey


def _at_once(app, count: int, sign_in: Callable[[], None]) -> None:
    """Run ``sign_in`` in ``count`` threads released together (each with its connection);
    an exception in any of them fails the test."""
    database = app.extensions["database"]
    start = threading.Barrier(count)
    failures: list[BaseException] = []

    def run() -> None:
        with database.connection_context():
            start.wait()
            try:
                sign_in()
            except BaseException as exc:  # reported below, not lost in the thread
                failures.append(exc)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def _queued_onboardings(row: AccountOnboarding) -> list:
    queue = jobs.queue("default")
    found = [queue.fetch_job(job_id) for job_id in queue.get_job_ids()]
    return [job for job in found if job is not None
            and job.func_name == onboarding_queue.JOB_NAME and list(job.args) == [str(row.id)]]


def _old_account_wallet(database, user: User) -> TradingWallet:
    """A deposit wallet with no onboarding started, as accounts made before this change
    have it (a wallet made inside a transaction queues nothing)."""
    with database.atomic():
        wallet = wallets.get_or_create(user)
    assert not AccountOnboarding.select().where(AccountOnboarding.wallet == wallet.id).exists()
    return wallet


def _wait_ready(client, headers: dict[str, str]) -> dict:
    """``GET /api/trading-account`` until the setup is done (its progress shown meanwhile)."""
    deadline = time.monotonic() + DEADLINE
    while True:
        status = client.get("/api/trading-account", headers=headers).get_json()
        if status["ready"]:
            return status
        assert status["status"] in ("pending", "running"), status
        # All four steps may show done a moment before the run records itself ready.
        assert 0 <= status["progress"]["done"] <= status["progress"]["total"] == 4
        assert time.monotonic() < deadline, status
        time.sleep(0.2)


def test_a_new_api_user_trades_straight_away_without_asking_for_an_address(
        client, inbox, venue_control, worker_host, market) -> None:  # noqa: F811 (fixture)
    """Signed in over REST, the setup is already under way (started by the sign-in), the
    worker finishes it, and the first live order is accepted; no wallet page, no deposit
    address asked for, no onboarding call."""
    venue_control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    email = f"straight-to-trading-{secrets.token_hex(3)}@example.com"
    headers = sign_in_over_rest(client, inbox, email)
    user = User.get(User.email == email)
    wallet = wallets.for_user(user.id)
    assert wallet is not None and wallet.signature_type == SIGNATURE_TYPE_DEPOSIT_WALLET
    assert AccountOnboarding.select().where(AccountOnboarding.wallet == wallet.id).exists()

    status = _wait_ready(client, headers)
    assert status["progress"] == {"done": 4, "total": 4}
    venue_control.fund(wallets.maker(wallet), "100", seen=False)
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    quote = client.post("/api/markets/order/preview", json=body, headers=headers)
    assert quote.status_code == 200, quote.get_data(as_text=True)
    placed = client.post("/api/markets/order", headers=headers,
                         json={**body, "preview_id": quote.get_json()["preview_id"]})
    assert placed.status_code == 200, placed.get_data(as_text=True)
    assert placed.get_json()["status"] == "filled"
    # Signing in again finds the setup done and queues nothing.
    sign_in_over_rest(client, inbox, email)
    [row] = AccountOnboarding.select().where(AccountOnboarding.wallet == wallet.id)
    assert row.status == "ready" and _queued_onboardings(row) == []


def test_parallel_first_requests_of_a_new_account_start_one_setup(app, client, wallet_chain,
                                                                   user, api_key) -> None:
    """An account only ever used through an API key (made before setup started at sign-in):
    the key's first requests, at once, make one deposit wallet and queue one onboarding."""
    headers = {"Authorization": f"Bearer {api_key('read:account')}"}
    assert wallets.for_user(user) is None
    answers: list[int] = []
    _at_once(app, 4, lambda: answers.append(
        client.get("/api/trading-account", headers=headers).status_code))
    assert answers == [200] * 4
    [wallet] = TradingWallet.select().where(TradingWallet.user == user.id)
    [row] = AccountOnboarding.select().where(AccountOnboarding.wallet == wallet.id)
    assert row.status == "pending" and len(_queued_onboardings(row)) == 1
    # A later use is no first use: nothing more is queued.
    assert client.get("/api/trading-account", headers=headers).status_code == 200
    assert len(_queued_onboardings(row)) == 1


def test_parallel_first_sign_ins_of_a_new_account_start_one_setup(app, wallet_chain,
                                                                   user) -> None:
    assert wallets.for_user(user) is None
    _at_once(app, 4, lambda: account_setup.start(user))
    [wallet] = TradingWallet.select().where(TradingWallet.user == user.id)
    [row] = AccountOnboarding.select().where(AccountOnboarding.wallet == wallet.id)
    assert row.status == "pending" and len(_queued_onboardings(row)) == 1


def test_concurrent_sign_ins_of_an_old_account_queue_one_onboarding(app, wallet_chain,
                                                                     bound_db, user) -> None:
    wallet = _old_account_wallet(bound_db, user)
    _at_once(app, 4, lambda: account_setup.start(user))
    [row] = AccountOnboarding.select().where(AccountOnboarding.wallet == wallet.id)
    assert row.status == "pending" and len(_queued_onboardings(row)) == 1


def test_without_a_chain_a_sign_in_or_a_live_order_queues_nothing(
        client, bound_db, user, auth_headers, market) -> None:
    """The test suite's (and a paper-only deployment's) accounts: nothing to set up on."""
    wallet = _old_account_wallet(bound_db, user)
    account_setup.start(user)
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    quote = client.post("/api/markets/order/preview", json=body, headers=auth_headers)
    placed = client.post("/api/markets/order", headers=auth_headers,
                         json={**body, "preview_id": quote.get_json()["preview_id"]})
    assert placed.status_code == 409, placed.get_data(as_text=True)
    assert "not set up for the venue yet" in placed.get_json()["error"]
    assert not AccountOnboarding.select().where(AccountOnboarding.wallet == wallet.id).exists()


def test_a_live_order_of_an_old_account_starts_its_setup_and_says_so(
        client, wallet_chain, bound_db, user, auth_headers, market) -> None:
    wallet = _old_account_wallet(bound_db, user)
    body = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}

    def order() -> dict:
        quote = client.post("/api/markets/order/preview", json=body, headers=auth_headers)
        assert quote.status_code == 200, quote.get_data(as_text=True)
        placed = client.post("/api/markets/order", headers=auth_headers,
                             json={**body, "preview_id": quote.get_json()["preview_id"]})
        assert placed.status_code == 409, placed.get_data(as_text=True)
        return placed.get_json()

    refused = order()
    assert refused["code"] == "wallet_error"
    assert [b["code"] for b in refused["blockers"]] == ["onboarding_incomplete"]
    # It says the setup is under way and where to follow it, not what to run.
    assert "being set up for the venue" in refused["error"]
    assert "GET /api/trading-account" in refused["error"]
    [row] = AccountOnboarding.select().where(AccountOnboarding.wallet == wallet.id)
    assert row.status == "pending" and len(_queued_onboardings(row)) == 1
    # Asking again while it is under way queues nothing more.
    again = order()
    assert again["error"] == refused["error"]
    assert len(_queued_onboardings(row)) == 1


def test_connecting_an_existing_account_after_the_first_sign_in_still_works(
        app, client, inbox, wallet_chain) -> None:
    """The sign-in made a deposit wallet and queued its setup; connecting a polymarket.com
    account replaces it (unused) and sets the connected one up instead."""
    email = f"connects-{secrets.token_hex(3)}@example.com"
    headers = sign_in_over_rest(client, inbox, email)
    user = User.get(User.email == email)
    generated = wallets.for_user(user.id)
    [setup] = AccountOnboarding.select().where(AccountOnboarding.wallet == generated.id)
    key = OrderKey("0x" + secrets.token_hex(32))
    address = beacon_deposit_wallet_address(key.address, trading_accounts.contracts())
    stepped_up = step_up_headers(app, headers["Authorization"].removeprefix("Bearer "))
    connected = client.post("/api/trading-account/connect", headers=stepped_up,
                            json={"wallet_address": address, "private_key": key.private_key})
    assert connected.status_code == 201, connected.get_data(as_text=True)
    account = connected.get_json()["account"]
    assert (account["kind"], account["wallet_address"]) == ("connected", address)
    wallet = wallets.for_user(user.id)
    assert wallet.id != generated.id and wallet.address == key.address
    assert ReplacedWallet.get_by_id(generated.id).address == generated.address
    # The connected account's setup is queued; the generated one's is gone with it.
    [row] = AccountOnboarding.select().where(AccountOnboarding.wallet == wallet.id)
    assert len(_queued_onboardings(row)) == 1
    assert not AccountOnboarding.select().where(AccountOnboarding.id == setup.id).exists()
    # Signing in again keeps the connected account.
    sign_in_over_rest(client, inbox, email)
    assert wallets.for_user(user.id).id == wallet.id


def test_an_app_allowed_over_oauth_starts_the_setup(app, client, wallet_chain, user) -> None:
    """An account an app signs in to (its consent) trades through it at once: the consent
    starts the set-up, as a sign-in does (this user never signed in otherwise)."""
    assert wallets.for_user(user) is None
    _registration, tokens = obtain_tokens(client, user, ["read:account"],
                                          resource=api_resource(app))
    wallet = wallets.for_user(user)
    assert wallet is not None and wallet.signature_type == SIGNATURE_TYPE_DEPOSIT_WALLET
    [row] = AccountOnboarding.select().where(AccountOnboarding.wallet == wallet.id)
    assert len(_queued_onboardings(row)) == 1
    # The app follows it with its token.
    status = client.get("/api/trading-account", headers=bearer(tokens["access_token"]))
    assert status.status_code == 200 and status.get_json()["account"]["kind"] == "deposit_wallet"
