"""Onboarding a trading account until the venue accepts its orders (issue 16), as one RQ job
whose progress the user follows:

1. ``deploy``: a deposit wallet without code is deployed through the one wallet lifecycle
   (services/wallets/wallet_lifecycle.py): a durable ``WalletDeployment`` row whose
   ``WALLET-CREATE`` body is stored before it is sent through the relayer (the operator's
   builder key, or the account's own relayer key), its id stored as soon as the relayer
   answers, followed to ``confirmed`` or ``failed``. An earlier run's row still open is
   resumed: a lost answer is settled by asking the relayer (its list of our transactions,
   then ``/deployed``), never by a blind new send;
2. ``approvals``: the required approvals (ACCOUNTS.md §5) read on chain first, the missing
   ones sent through the one wallet lifecycle (services/wallets/wallet_lifecycle.py), each
   send a durable ``WalletApproval`` row: ONE relayer transaction signed by the owner (a
   ``WALLET`` batch from a deposit wallet, a ``PROXY`` or ``SAFE`` one from a grandfathered
   proxy or Safe; the account's own Relayer API key, else the builder key); an allowlisted
   plain EOA sends them itself, one on-chain transaction each (it pays POL). An earlier
   run's row still open is followed to its end before what is missing is read again;
3. ``credentials``: the CLOB API credentials, derived with the owner's L1 signature;
4. ``balance_update``: ``/balance-allowance/update`` with the account's signature type, so
   the CLOB sees the deposits and approvals.

Exactly once: a run holds the onboarding row's lease (a conditional UPDATE), so two
requests at once run one onboarding, and the deployment and approvals rows hold the wallet's
lease while they send. A relayer that is down, slow or ends a transaction FAILED/INVALID
leaves the step failed with the relayer's reason (the row failed, or open for the next run
to resume); ``start`` again retries from that step, a failed row with a new one.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from uuid import UUID

import peewee
from web3 import Web3

from chain.errors import ChainError
from chain.tokens import read
from chain.transactions import SignedTx, build_transaction, require_gas_for
from models.base import utcnow
from models.user import User
from models.wallet import (
    CONFIRMED,
    FAILED,
    ONBOARDING_FAILED,
    ONBOARDING_PENDING,
    ONBOARDING_READY,
    ONBOARDING_RUNNING,
    ONBOARDING_STEPS,
    SIGNATURE_TYPE_DEPOSIT_WALLET,
    SIGNATURE_TYPE_EOA,
    STEP_APPROVALS,
    STEP_BALANCE_UPDATE,
    STEP_CREDENTIALS,
    STEP_DEPLOY,
    STEP_DONE,
    AccountOnboarding,
    TradingWallet,
    WalletApproval,
    WalletDeployment,
)
from services.platform import chain_access, errors, venues
from services.platform.principal import user_id_of
from services.wallets import (
    chain_transport,
    deposits,
    onboarding_queue,
    trading_accounts,
    venue_accounts,
    wallet_batches,
    wallet_lifecycle,
    wallet_transactions,
    wallets,
)
from venue.accounts import Approval, Call, required_approvals
from venue.errors import VenueError
from venue.relayer import RelayerAuth

log = logging.getLogger(__name__)

JOB_NAME = onboarding_queue.JOB_NAME
APPROVAL_KIND = "approval"  # a WalletTransaction an EOA sends to grant one approval
APPROVALS_METADATA = "copytrade approvals"
DEPLOY_METADATA = "copytrade deposit wallet"
LEASE_SECONDS = onboarding_queue.LEASE_SECONDS
REPLACED = "replaced"  # a run's answer when a connected account replaced its wallet
BUILDER_MISSING = ("Builder credentials not configured: the operator must set "
                   "POLYMARKET_BUILDER_API_KEY, _SECRET and _PASSPHRASE (or connect an account "
                   "with its own Relayer API key).")
STEP_TITLES = {
    STEP_DEPLOY: "Deploy the deposit wallet",
    STEP_APPROVALS: "Approve the exchanges to trade the wallet's pUSD and positions",
    STEP_CREDENTIALS: "Create the venue API credentials",
    STEP_BALANCE_UPDATE: "Let the venue see the wallet's balance",
}


class StepFailed(Exception):
    """A step could not finish; ``reason`` is shown to the user (the relayer's, when any)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


record = onboarding_queue.record


def start(user: User | UUID | str) -> dict[str, Any]:
    """Start (or retry from its failed step) the user's onboarding as a job; its status.

    A user without a trading wallet gets a deposit wallet."""
    wallet = wallets.get_or_create_deposit_wallet(user_id_of(user))
    onboarding_queue.enqueue(wallet)
    return checked_status(user)


def status(user: User | UUID | str) -> dict[str, Any]:
    """Where onboarding stands, step by step (each pending, running, done or failed)."""
    wallet = wallets.for_user(user_id_of(user))
    if wallet is None:
        return {"status": ONBOARDING_PENDING, "ready": False, "error": None, "steps": [
            {"name": name, "title": STEP_TITLES[name], "state": "pending"}
            for name in ONBOARDING_STEPS], "account": None}
    row = AccountOnboarding.get_or_none(AccountOnboarding.wallet == wallet.id)
    current = row.step if row else STEP_DEPLOY
    state = row.status if row else ONBOARDING_PENDING
    reached = (ONBOARDING_STEPS.index(current) if current in ONBOARDING_STEPS
               else len(ONBOARDING_STEPS))
    steps = []
    for index, name in enumerate(ONBOARDING_STEPS):
        step_state = ("done" if index < reached else
                      "pending" if index > reached else
                      {ONBOARDING_RUNNING: "running", ONBOARDING_FAILED: "failed"}.get(
                          state, "pending"))
        steps.append({"name": name, "title": STEP_TITLES[name], "state": step_state})
    done = reached
    return {"status": state, "ready": state == ONBOARDING_READY,
            "error": row.error if row else None,
            "progress": {"done": done, "total": len(ONBOARDING_STEPS)},
            "steps": steps, "account": trading_accounts.describe(wallet),
            "deploy_transaction_id": _deploy_transaction_id(wallet),
            "approvals_transaction_id": row.approvals_transaction_id if row else None}


# Onboarding recorded as done while the venue says the deposit wallet is not deployed: shown
# as failed (never "ready" beside "not deployed"), with the way out.
LOST_BY_VENUE = ("Onboarding finished, but the venue reports this deposit wallet as not "
                 "deployed: the venue or its chain no longer knows it. On a local stack the "
                 "chain started afresh beside the kept database: `copytrade dev reset` "
                 "starts everything afresh.")


def lost_by_venue(result: dict[str, Any]) -> dict[str, Any]:
    """``status()``'s answer as a deployment the venue does not know shows it: failed at
    the deploy step, with ``LOST_BY_VENUE``."""
    steps = [{**step, "state": "failed"} if step["name"] == STEP_DEPLOY else step
             for step in result["steps"]]
    return {**result, "status": ONBOARDING_FAILED, "ready": False, "error": LOST_BY_VENUE,
            "steps": steps}


def checked_status(user: User | UUID | str) -> dict[str, Any]:
    """``status()``, with the venue asked whether a ready deposit wallet is deployed (one
    request, only once onboarding is ready); a venue that cannot answer changes nothing."""
    result = status(user)
    account = result.get("account")
    if not result["ready"] or not account or not account["deposit_wallet"]:
        return result
    try:
        deployed = venues.client().relayer.deployed(account["wallet_address"])
    except Exception as exc:
        if errors.from_external(exc) is None:
            raise
        return result
    return result if deployed else lost_by_venue(result)


# --- the job -------------------------------------------------------------------------------


def _take_lease(onboarding_id: UUID | str, owner: str) -> bool:
    now = utcnow()
    taken = (AccountOnboarding
             .update(lease_owner=owner, lease_until=now + timedelta(seconds=LEASE_SECONDS),
                     status=ONBOARDING_RUNNING, error=None, updated_at=now,
                     attempts=AccountOnboarding.attempts + 1)
             .where((AccountOnboarding.id == onboarding_id)
                    & (AccountOnboarding.status != ONBOARDING_READY)
                    & (AccountOnboarding.lease_until.is_null()
                       | (AccountOnboarding.lease_until < now)))
             .execute())
    return taken == 1


def _save(row: AccountOnboarding, owner: str, **changes: Any) -> None:
    """Write ``changes`` while the lease is still ours (a lost lease stops the run)."""
    changes["updated_at"] = utcnow()
    written = (AccountOnboarding.update(**changes)
               .where((AccountOnboarding.id == row.id)
                      & (AccountOnboarding.lease_owner == owner))
               .execute())
    if written != 1:
        raise StepFailed("Another run took over this onboarding.")
    for name, value in changes.items():
        setattr(row, name, value)


def run(onboarding_id: UUID | str) -> str:
    """The job: run the remaining steps under the row's lease; return the final status."""
    owner = secrets.token_hex(8)
    if not _take_lease(onboarding_id, owner):
        row = AccountOnboarding.get_or_none(AccountOnboarding.id == onboarding_id)
        # ready, or another run holds it; gone: a connected account replaced the wallet
        return row.status if row is not None else REPLACED
    row = AccountOnboarding.get_by_id(onboarding_id)
    wallet = TradingWallet.get_by_id(row.wallet_id)
    steps: dict[str, Callable[[AccountOnboarding, TradingWallet, str], None]] = {
        STEP_DEPLOY: _deploy, STEP_APPROVALS: _approvals, STEP_CREDENTIALS: _credentials,
        STEP_BALANCE_UPDATE: _balance_update}
    try:
        while row.step != STEP_DONE:
            steps[row.step](row, wallet, owner)
            following = ONBOARDING_STEPS.index(row.step) + 1
            _save(row, owner, step=(ONBOARDING_STEPS[following]
                                    if following < len(ONBOARDING_STEPS) else STEP_DONE))
    except (StepFailed, VenueError, errors.CopytradeError, peewee.IntegrityError) as exc:
        if not AccountOnboarding.select().where(AccountOnboarding.id == row.id).exists():
            # The wallet was replaced mid-run (``generated_wallets``): it held nothing, so
            # whatever this run sent for it strands nothing; there is nothing to record.
            log.info("onboarding %s stopped: its wallet was replaced", row.id)
            return REPLACED
        if isinstance(exc, peewee.IntegrityError):
            raise
        reason = getattr(exc, "reason", None) or getattr(exc, "message", None) or str(exc)
        log.warning("onboarding %s failed at %s: %s", row.id, row.step, reason)
        AccountOnboarding.update(status=ONBOARDING_FAILED, error=reason[:2000],
                                 lease_owner=None, lease_until=None, updated_at=utcnow()
                                 ).where((AccountOnboarding.id == row.id)
                                         & (AccountOnboarding.lease_owner == owner)).execute()
        return ONBOARDING_FAILED
    AccountOnboarding.update(status=ONBOARDING_READY, error=None, lease_owner=None,
                             lease_until=None, updated_at=utcnow()
                             ).where(AccountOnboarding.id == row.id).execute()
    # Funds that arrived before the account was ready (USDC.e to wrap, pUSD to be seen).
    deposits.enqueue_check(wallet)
    return ONBOARDING_READY


def _auth(wallet: TradingWallet) -> RelayerAuth:
    auth = trading_accounts.relayer_auth(wallet)
    if auth is None:
        raise StepFailed(BUILDER_MISSING)
    return auth


def _deploy(row: AccountOnboarding, wallet: TradingWallet, owner: str) -> None:
    if wallet.signature_type != SIGNATURE_TYPE_DEPOSIT_WALLET:
        return  # EOAs have nothing to deploy; proxies and Safes exist already
    _auth(wallet)  # no credentials: nothing can be sent, say which are missing
    # An earlier run's deployment still open is resumed (the lifecycle settles what it
    # sent); else the wallet's code says whether one is needed.
    record = next(iter(_open(WalletDeployment, wallet)), None)
    if record is None:
        if venues.client().relayer.deployed(wallets.maker(wallet)):
            return  # a connected account's wallet, or deployed by polymarket.com
        if wallet.session_signer:
            raise StepFailed("A session key cannot deploy its wallet; deploy it on "
                             "polymarket.com first.")
        record = WalletDeployment.create(wallet=wallet.id)
    status = wallet_batches.deploy(wallet_batches.BatchRow(WalletDeployment, record.id),
                                   wallet, DEPLOY_METADATA)
    _final(WalletDeployment, record.id, status, "deployment")


def _deploy_transaction_id(wallet: TradingWallet) -> str | None:
    """The relayer's id of the wallet's newest deployment that has one."""
    newest = (WalletDeployment.select(WalletDeployment.relayer_transaction_id)
              .where((WalletDeployment.wallet == wallet.id)
                     & WalletDeployment.relayer_transaction_id.is_null(False))
              .order_by(WalletDeployment.created_at.desc()).first())
    return newest.relayer_transaction_id if newest else None


def _open(model: type[peewee.Model], wallet: TradingWallet) -> list[Any]:
    """The wallet's rows of ``model`` the lifecycle has not finished, oldest first."""
    return list(model.select().where((model.wallet == wallet.id)
                                     & model.status.in_(wallet_lifecycle.RUNNABLE))
                .order_by(model.created_at))


def _final(model: type[peewee.Model], row_id: Any, status: str, noun: str) -> Any:
    """The lifecycle's row once confirmed; else StepFailed with what the row says (an open
    one is looked at again by the retry, a failed one is replaced by a new one)."""
    done = model.get_by_id(row_id)
    if status == CONFIRMED:
        return done
    raise StepFailed(done.error or (f"The {noun} did nothing; retry." if status == FAILED
                                    else f"The {noun}: not final yet; retry shortly."))


def missing_approvals(wallet: TradingWallet) -> list[Approval]:
    """The required approvals the maker wallet has not granted yet, read on chain.

    Tokens with no code on this chain (a dev chain lacks some of Polygon's) are skipped:
    nothing can be approved there and the venue cannot use them. Where the chain cannot
    tell (none configured, or the maker is not on it: the sandbox's simulated wallets),
    every approval counts as missing: granting one again is harmless.
    """
    approvals = list(required_approvals(trading_accounts.contracts()))
    if not chain_access.current().rpc_url:
        return approvals
    w3 = chain_access.web3()
    maker = wallets.maker(wallet)
    if not read(lambda: w3.eth.get_code(maker), "get_code") and (
            wallet.signature_type != SIGNATURE_TYPE_EOA):
        return approvals
    code: dict[str, bool] = {}
    missing: list[Approval] = []
    for approval in approvals:
        if approval.token not in code:
            code[approval.token] = bool(read(lambda a=approval: w3.eth.get_code(a.token),
                                             "get_code"))
        if not code[approval.token]:
            continue
        answer = read(lambda a=approval: w3.eth.call(
            {"to": a.token, "data": a.read_calldata(maker)}), f"{approval.method} read")
        if not approval.granted(int.from_bytes(bytes(answer) or b"\0", "big")):
            missing.append(approval)
    return missing


def _approvals(row: AccountOnboarding, wallet: TradingWallet, owner: str) -> None:
    eoa = wallet.signature_type == SIGNATURE_TYPE_EOA
    if not eoa:
        _auth(wallet)  # no credentials: nothing can be sent, say which are missing
    # An earlier run's approvals still open are followed first (the lifecycle resumes them):
    # only once they are final does the chain say what is missing, so none is sent twice.
    for earlier in _open(WalletApproval, wallet):
        _noted(row, owner, _granted(earlier, wallet))
    missing = missing_approvals(wallet)
    if not missing:
        return
    if wallet.signature_type != SIGNATURE_TYPE_DEPOSIT_WALLET and _venue_sees_approvals(wallet):
        return  # a connected account that approved on polymarket.com before
    if eoa:
        if not chain_access.current().rpc_url:
            raise StepFailed("No chain is configured (POLYGON_RPC_URL): a plain EOA's "
                             "approvals are sent on chain from the EOA.")
        for approval in missing:  # one transaction each (it pays POL), mined before the next
            _granted(_approval_row(wallet, [approval]), wallet)
        return
    if wallet.session_signer:
        # A session key is scoped to trading (ACCOUNTS.md §2.6): wallet calls are the owner's.
        raise StepFailed(f"The wallet lacks {len(missing)} approval(s) the venue needs, and a "
                         "session key does not send them: approve on polymarket.com with the "
                         "owner (one trade there does it), then retry.")
    _noted(row, owner, _granted(_approval_row(wallet, missing), wallet))


def _noted(row: AccountOnboarding, owner: str, done: WalletApproval) -> None:
    """The onboarding shows the relayer transaction that granted its approvals."""
    if done.relayer_transaction_id:
        _save(row, owner, approvals_transaction_id=done.relayer_transaction_id)


def _approval_row(wallet: TradingWallet, approvals: list[Approval]) -> WalletApproval:
    """The durable record of approvals about to be sent (written before anything leaves)."""
    calls = [approval.call() for approval in approvals]
    return WalletApproval.create(wallet=wallet.id, calls=json.dumps(
        [{"target": c.target, "data": c.data} for c in calls]))


def _calls(record: WalletApproval) -> list[Call]:
    """What a fresh signature of the row runs (a row moved from an onboarding's own columns
    holds none: every required approval, granting one again is harmless)."""
    stored = [Call(c["target"], c["data"]) for c in json.loads(record.calls)]
    return stored or [a.call() for a in required_approvals(trading_accounts.contracts())]


def _granted(record: WalletApproval, wallet: TradingWallet) -> WalletApproval:
    """Drive the approvals row through the one wallet lifecycle (a plain EOA's one
    transaction on chain, else one relayer transaction): the row once confirmed; else
    StepFailed with what the row says (an open one is looked at again by the retry)."""
    if wallet.signature_type == SIGNATURE_TYPE_EOA:
        [call] = _calls(record)
        try:
            status = wallet_lifecycle.run(WalletApproval, record.id, wallet,
                                          chain_transport.ChainTransport(
                                              WalletApproval, record.id, wallet,
                                              APPROVAL_KIND, _approval_builder(call)))
        except ChainError as exc:  # the row is written: the retry resumes it
            raise StepFailed(wallet_transactions.as_chain_error_message(exc)) from exc
    else:
        status = wallet_batches.run(wallet_batches.BatchRow(WalletApproval, record.id),
                                    wallet, _calls, APPROVALS_METADATA, "transaction")
    return _final(WalletApproval, record.id, status, "approvals")


def _approval_builder(call: Call) -> wallet_transactions.Builder:
    """Sign one approval as the EOA's own transaction (it pays POL: too little fails with
    the amount needed)."""
    chain_id = chain_access.chain_id()

    def build(w3: Web3, key: bytes, nonce: int) -> SignedTx:
        signed = build_transaction(w3, private_key=key, to=call.target, nonce=nonce,
                                   data=bytes.fromhex(call.data[2:]), chain_id=chain_id)
        require_gas_for(w3, signed)
        return signed

    return build


def _venue_sees_approvals(wallet: TradingWallet) -> bool:
    """Where the chain cannot tell (none configured), whether the venue's own view (its
    refreshed ``/balance-allowance``) has the exchanges approved for a proxy, Safe or EOA
    account: what its orders are checked against. Derives the CLOB credentials early."""
    if chain_access.current().rpc_url:
        return False  # the chain was read: its answer stands
    account = venue_accounts.account(wallet.user_id)
    venue_accounts.refresh_balance(account)
    seen = venues.client().clob.balance_allowances(account.creds,
                                                   signature_type=account.signature_type)
    return not trading_accounts.exchanges_not_approved(seen.allowances)
def _credentials(row: AccountOnboarding, wallet: TradingWallet, owner: str) -> None:
    venue_accounts.account(wallet.user_id)  # derives and stores them when missing


def _balance_update(row: AccountOnboarding, wallet: TradingWallet, owner: str) -> None:
    refresh_balance(wallet.user_id)


def refresh_balance(user: User | UUID | str) -> None:
    """Have the CLOB re-read the user's balance and allowances (after a deposit, a wrap or
    approvals)."""
    venue_accounts.refresh_balance(venue_accounts.account(user))


__all__ = ["JOB_NAME", "StepFailed", "missing_approvals", "record", "refresh_balance", "run",
           "start", "status"]
