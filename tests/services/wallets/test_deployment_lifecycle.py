"""The deposit wallet's deployment goes through the one wallet lifecycle (issue 26): each
attempt a durable ``WalletDeployment`` row (models/wallet.py) whose ``WALLET-CREATE`` body is
stored before it is sent, sent through the sandbox relayer over HTTP, its id stored as soon
as the relayer answers and followed to ``confirmed`` or ``failed``; a lost answer or a crash
is settled by the next run from what the relayer says, never by a second deployment. And
the upgrade: an onboarding's own deployment and approvals columns move into the lifecycle's
rows (m0100, m0102), then go."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from typing import Any

import peewee
import pytest

from models import User, migrate
from models import database as database_module
from models.migrations import m0100_wallet_approvals as m0100
from models.migrations import m0102_wallet_deployments as m0102
from models.wallet import AccountOnboarding, TradingWallet, WalletApproval, WalletDeployment
from services.wallets import onboarding, trading_accounts, wallet_batches, wallets
from tests.conftest import _connect_postgresql, _pg_schema_url
from tests.trading_support import run_onboarding, take_queued
from venue import relayer
from venue.accounts.relayer_payloads import wallet_create_payload


class Crash(SystemExit):
    """The process dies at the step (``finally`` blocks run, as a lease's release does
    once a dead run's lease runs out)."""


@pytest.fixture
def new_wallet(bound_db: Any, venue_control: Any) -> Iterator[TradingWallet]:
    """A new user's deposit wallet, not deployed, its onboarding pending (its queued job
    taken off the queue: the test runs the job's body), the sandbox's request tally empty;
    the sandbox's faults disarmed afterwards."""
    venue_control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    user = User.create(email=f"{secrets.token_hex(6)}@example.com")
    wallet = wallets.get_or_create(user)
    take_queued(wallet)
    venue_control.call("DELETE", "/requests", expect=200)
    yield wallet
    venue_control.call("DELETE", "/faults", expect=200)


def _deployments(wallet: TradingWallet) -> list[WalletDeployment]:
    return list(WalletDeployment.select().where(WalletDeployment.wallet == wallet.id)
                .order_by(WalletDeployment.created_at))


def _created(venue_server: Any, wallet: TradingWallet) -> list[Any]:
    """The ``WALLET-CREATE`` transactions the sandbox relayer took for the wallet's owner."""
    with venue_server.state.lock:
        return [tx for tx in venue_server.state.relayer.transactions.values()
                if tx.type == "WALLET-CREATE" and tx.sender == wallet.address.lower()]


def _submits(venue_control: Any) -> int:
    """How many ``POST /relayer/submit`` reached the sandbox since the tally was emptied."""
    counted = venue_control.call("GET", "/requests", expect=200).get(
        "POST /relayer/submit", {})
    return sum(counted.values())


def _body(wallet: TradingWallet) -> dict[str, str]:
    return wallet_create_payload(wallet.address,
                                 trading_accounts.contracts().deposit_wallet_factory,
                                 onboarding.DEPLOY_METADATA)


def _onboard(wallet: TradingWallet) -> str:
    return onboarding.run(onboarding.record(wallet).id)


def test_a_deployment_whose_answer_was_lost_is_followed_by_the_next_run_never_sent_twice(
        new_wallet, venue_control, venue_server) -> None:
    wallet = new_wallet
    # The relayer takes the WALLET-CREATE, its answer is lost...
    venue_control.call("POST", "/faults", {"path": "/relayer/submit", "method": "POST",
                                           "after": True, "status": 500}, expect=201)
    # ...and its list of our transactions (which would name it) does not answer.
    venue_control.call("POST", "/faults", {"path": "/relayer/transactions", "method": "GET",
                                           "status": 500, "count": 50}, expect=201)
    assert _onboard(wallet) == "failed"
    [sent] = _deployments(wallet)
    assert sent.status == "ambiguous" and sent.relayer_transaction_id is None
    assert json.loads(sent.relayer_payload) == _body(wallet)
    status = onboarding.status(wallet.user_id)
    assert "answer was lost" in status["error"]
    assert status["steps"][0]["state"] == "failed"
    assert len(_created(venue_server, wallet)) == 1  # the relayer did take it
    # an operator sees it among the wallet operations to settle
    assert {"kind": "walletdeployment", "id": str(sent.id)}.items() <= next(
        r for r in wallet_batches.ambiguous() if r["id"] == str(sent.id)).items()

    venue_control.call("DELETE", "/faults", expect=200)
    assert _onboard(wallet) == "ready", onboarding.status(wallet.user_id)["error"]
    [done] = _deployments(wallet)  # the same row, its transaction found and followed
    [created] = _created(venue_server, wallet)
    assert done.id == sent.id and done.status == "confirmed"
    assert done.relayer_transaction_id == created.id
    assert done.relayer_transaction_hash == created.transaction_hash
    assert created.state == "STATE_CONFIRMED"
    assert onboarding.status(wallet.user_id)["deploy_transaction_id"] == created.id
    # one WALLET-CREATE and one approvals batch reached the relayer, nothing else
    assert _submits(venue_control) == 2


def test_a_crash_after_the_body_is_stored_sends_the_stored_body_once_on_the_next_run(
        new_wallet, venue_control, venue_server, monkeypatch) -> None:
    wallet = new_wallet

    def died(*args: Any, **kwargs: Any) -> Any:
        raise Crash("stored, not sent")

    monkeypatch.setattr(relayer, "submit_with_retry", died)
    with pytest.raises(Crash):
        _onboard(wallet)
    monkeypatch.undo()
    [stored] = _deployments(wallet)
    assert stored.status == "signed" and stored.relayer_transaction_id is None
    assert json.loads(stored.relayer_payload) == _body(wallet)
    assert _created(venue_server, wallet) == [] and _submits(venue_control) == 0
    # the dead run's onboarding lease runs out
    AccountOnboarding.update(lease_until=None).where(
        AccountOnboarding.wallet == wallet.id).execute()

    assert _onboard(wallet) == "ready", onboarding.status(wallet.user_id)["error"]
    [done] = _deployments(wallet)
    [created] = _created(venue_server, wallet)
    assert done.id == stored.id and done.status == "confirmed"
    assert json.loads(done.relayer_payload) == _body(wallet)  # the body sent is the stored
    assert (created.metadata, created.to) == (onboarding.DEPLOY_METADATA,
                                              _body(wallet)["to"])
    assert done.relayer_transaction_id == created.id
    assert _submits(venue_control) == 2  # the WALLET-CREATE once, then the approvals


def test_a_deployment_the_relayer_ends_failed_fails_the_row_and_the_retry_makes_a_new_one(
        new_wallet, venue_control, venue_server) -> None:
    wallet = new_wallet
    venue_control.call("POST", "/relayer", {"fail_next": {
        "state": "FAILED", "message": "wallet registration failed (sandbox)"}}, expect=200)
    assert _onboard(wallet) == "failed"
    [failed] = _deployments(wallet)
    assert failed.status == "failed" and failed.relayer_transaction_id
    status = onboarding.status(wallet.user_id)
    assert status["error"] == ("The relayer ended the deployment STATE_FAILED: wallet "
                               "registration failed (sandbox). Nothing was sent; try again.")
    assert [s["state"] for s in status["steps"]] == ["failed", "pending", "pending", "pending"]
    assert not venue_control.get("/relayer/deployed", address=wallets.maker(wallet),
                                 type="WALLET")["deployed"]

    assert _onboard(wallet) == "ready", onboarding.status(wallet.user_id)["error"]
    first, second = _deployments(wallet)
    assert (first.id, first.status) == (failed.id, "failed")
    assert second.status == "confirmed"
    assert second.relayer_transaction_id != failed.relayer_transaction_id
    created = {tx.id: tx.state for tx in _created(venue_server, wallet)}
    assert created == {failed.relayer_transaction_id: "STATE_FAILED",
                       second.relayer_transaction_id: "STATE_CONFIRMED"}
    assert onboarding.status(wallet.user_id)["deploy_transaction_id"] == (
        second.relayer_transaction_id)


def test_an_onboarded_wallet_is_not_deployed_again(new_wallet, venue_control,
                                                   venue_server) -> None:
    wallet = new_wallet
    run_onboarding(wallet)
    row = AccountOnboarding.get(AccountOnboarding.wallet == wallet.id)
    AccountOnboarding.update(status="failed", step="deploy").where(
        AccountOnboarding.id == row.id).execute()
    assert _onboard(wallet) == "ready"
    assert [d.status for d in _deployments(wallet)] == ["confirmed"]
    assert len(_created(venue_server, wallet)) == 1


# --- the upgrade -------------------------------------------------------------------------

BEFORE = "m0099"  # the last migration before the lifecycle took the onboarding's sends


@pytest.fixture
def old_database(bound_db: Any, tmp_path: Any) -> Iterator[peewee.Database]:
    """A new database of the test's kind, migrated up to ``BEFORE`` only."""
    postgres = isinstance(bound_db, peewee.PostgresqlDatabase)
    schema = f"up_{secrets.token_hex(4)}"
    if postgres:
        admin = _connect_postgresql()
        admin.autocommit = True
        with admin.cursor() as cur:
            cur.execute(f'CREATE SCHEMA "{schema}"')
        url = _pg_schema_url(schema)
    else:
        url = f"sqlite:///{tmp_path / 'old.db'}"
    old = database_module.open_database(url)
    every = migrate.available()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(migrate, "available", lambda: [m for m in every if m[:5] <= BEFORE])
        with old.connection_context():
            migrate.migrate(old)
    try:
        with old.connection_context():
            yield old
    finally:
        old.close()
        if postgres:
            with admin.cursor() as cur:
                cur.execute(f'DROP SCHEMA "{schema}" CASCADE')
            admin.close()


def _bound(database: peewee.Database, *models: type[peewee.Model]) -> Any:
    """``models`` (only them: the others stay on the test's database) on ``database``."""
    return database.bind_ctx(models, bind_refs=False, bind_backrefs=False)


def _old_account(database: peewee.Database, step: str = "deploy",
                 deploy_transaction_id: str | None = None, **approvals: Any) -> TradingWallet:
    """A deposit wallet and its onboarding as an older release left them: its deployment's
    id and its approvals batch in the onboarding's own columns (as the migrations that move
    them froze those columns)."""
    deploys, batches = m0102.AccountOnboarding, m0100.AccountOnboarding
    with _bound(database, User, TradingWallet, AccountOnboarding, deploys, batches):
        user = User.create(email=f"{secrets.token_hex(6)}@example.com")
        wallet = TradingWallet.create(user=user, address="0x" + secrets.token_hex(20),
                                      private_key_sealed="sealed", key_id="k1",
                                      signature_type=3)
        row = AccountOnboarding.create(wallet=wallet.id, step=step)
        deploys.update(deploy_transaction_id=deploy_transaction_id).where(
            deploys.id == row.id).execute()
        if approvals:
            batches.update(**approvals).where(batches.id == row.id).execute()
        return wallet


def test_the_upgrade_moves_an_onboardings_sends_into_the_lifecycles_rows(old_database
                                                                         ) -> None:
    following = _old_account(old_database, deploy_transaction_id="tx-deploy")
    ran = _old_account(old_database, step="credentials", deploy_transaction_id="tx-ran",
                       approvals_nonce=3, approvals_payload='{"nonce": "3"}',
                       approvals_transaction_id="tx-7")
    # no answered deployment (perhaps sent, its answer never stored): nothing moves, the
    # next run asks /deployed first
    unanswered = _old_account(old_database)
    assert migrate.migrate(old_database) == [m for m in migrate.available() if m[:5] > BEFORE]
    with _bound(old_database, WalletDeployment, WalletApproval, AccountOnboarding):
        moved = {(d.wallet_id, d.status, d.relayer_transaction_id, d.relayer_payload)
                 for d in WalletDeployment.select()}
        assert moved == {(following.id, "broadcast", "tx-deploy", None),
                         (ran.id, "confirmed", "tx-ran", None)}
        [approvals] = WalletApproval.select()
        assert (approvals.wallet_id, approvals.status, approvals.relayer_nonce,
                approvals.relayer_transaction_id, approvals.relayer_payload) == (
            ran.id, "broadcast", 3, "tx-7", '{"nonce": "3"}')
        assert json.loads(approvals.calls) == []
        # the onboarding keeps what its status shows, no send of its own
        kept = AccountOnboarding.get(AccountOnboarding.wallet == ran.id)
        assert kept.approvals_transaction_id == "tx-7"
        assert AccountOnboarding.get(AccountOnboarding.wallet == unanswered.id).step == (
            "deploy")
    columns = {c.name for c in old_database.get_columns("account_onboarding")}
    assert columns.isdisjoint({"deploy_submitted_at", "deploy_transaction_id",
                               "approvals_submitted_at", "approvals_nonce",
                               "approvals_deadline", "approvals_payload",
                               "approvals_transaction_hash"})
    assert "approvals_transaction_id" in columns
