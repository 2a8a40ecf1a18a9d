"""The relayer transport of the one wallet lifecycle (services/wallets/wallet_lifecycle.py):
a deposit wallet's ``WALLET`` batch, a grandfathered proxy's ``PROXY`` or Safe's ``SAFE``
transaction, for withdrawals, claims, wraps and the onboarding's approvals; and the deposit
wallet's deployment, an unsigned ``WALLET-CREATE`` (``submit_create``), stored, sent,
looked up and followed by the same code.

Under the wallet's lease (taken by the lifecycle), ``submit`` signs once and stores the exact
bytes (``{prefix}payload``, its nonce and deadline) with a conditional UPDATE that also
checks the lease is still ours, then sends them and stores the relayer's id as soon as it
answers; ``follow`` follows it to a final state, renewing the lease (``confirmed`` with the
chain hash, or ``failed`` when the relayer ends it FAILED/INVALID: then it did nothing).

A send whose answer was lost (or a crash before its id was stored) is looked up in the
relayer's list of our transactions (``GET /transactions``) by the stored signature and
nonce: found, its id is stored and it is followed like any other. A resend only ever sends
the stored bytes. A new signature is made only once the stored
batch provably can never run: the relayer refused the very bytes this run signed and sent
first, its deadline passed with the wallet's nonce unmoved, or its nonce was consumed by a
known other transaction (another row's, which the relayer reports run). Until then the row
is ``ambiguous``: it may have run or may still run, it is never sent "afresh", it keeps
reserving its amount, and the next run looks again. When the nonce was consumed and the
wallet's key is this server's alone (a deposit wallet it created, no session key), every
batch that could use that nonce is in these rows: the stored one ran (``confirmed``). So no
row signs a nonce another row's unsettled batch holds (stored, no relayer id): it waits
until that batch is settled, and a consumed nonce names one batch only.

The relayer's execute-params nonce is keyed by the owner, and with two deposit wallets under
one owner it can be the other wallet's (ACCOUNTS.md §12). So a first send refused with
``batch nonce X does not match on-chain nonce Y`` is signed once more with Y, that body
stored in place of the refused one (never taken, it can never run) before it leaves
(``_renonced``); and a stored batch whose nonce the route says moved (or not) is sent again
as it is, the relayer's refusal naming the wallet's own nonce deciding instead.

A deployment has no nonce: its lost answer is found in the list by its type and owner (one
the relayer ended FAILED/INVALID is not it), and a wallet that has code since proves it ran
(``confirmed``). Only then is the stored body resent, as it is; a second ``WALLET-CREATE``
could deploy nothing more anyway (the wallet's address is fixed by its owner).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import peewee

from models.base import db, utcnow
from models.wallet import (
    AMBIGUOUS,
    KIND_DEPOSIT_WALLET,
    SIGNATURE_TYPE_DEPOSIT_WALLET,
    SIGNATURE_TYPE_GNOSIS_SAFE,
    SIGNATURE_TYPE_POLY_PROXY,
    Claim,
    CollateralWrap,
    TradingWallet,
    WalletApproval,
    WalletDeployment,
    Withdrawal,
)
from services.platform import errors, venues
from services.wallets import trading_accounts, wallet_lifecycle, wallet_transactions, wallets
from venue import relayer
from venue.accounts.batch import Call
from venue.accounts.relayer_payloads import wallet_create_payload
from venue.accounts.relayer_rules import (
    TransactionState,
    onchain_nonce,
    resubmittable,
    wallet_busy,
)
from venue.errors import VenueError, VenueRateLimited, VenueRejected
from venue.models import RelayerTransaction
from venue.relayer import RelayerApi, RelayerAuth, RelayerTransactionFailed, Steps, await_final
from venue.signing import OrderKey

# A stored batch whose deadline passed this long ago, with the wallet's nonce unmoved, did
# not run and never will (the wallet refuses an expired batch); the slack covers a relayer
# that reports the nonce a little late.
DEADLINE_SLACK_SECONDS = 60
FOLLOW_POLLS = wallet_lifecycle.FOLLOW_POLLS

LOST_ANSWER = ("Sent to the relayer, but its answer was lost: it may run. It is "
               "not sent again until the relayer or the chain tells what became of it; "
               "the next run looks.")

CREATE = "WALLET-CREATE"
ENDED_UNRUN = (TransactionState.FAILED, TransactionState.INVALID)

BUILDER_MISSING = ("Builder credentials not configured: the operator must set "
                   "POLYMARKET_BUILDER_API_KEY, _SECRET and _PASSPHRASE.")

# The lifecycle's outcomes, as this transport raises them (services/wallets/wallet_lifecycle.py).
BatchRefused = wallet_lifecycle.Refused
BatchPending = wallet_lifecycle.Pending
BatchAmbiguous = wallet_lifecycle.Ambiguous
BatchExecuted = wallet_lifecycle.Executed


@dataclass(frozen=True)
class BatchRow:
    """The durable record of one relayer batch: the model, the row's id, and the prefix of
    its batch columns (``{prefix}nonce``, ``deadline``, ``payload``, ``transaction_id``,
    ``transaction_hash``)."""

    model: type[peewee.Model]
    row_id: Any
    prefix: str = "relayer_"

    def column(self, name: str) -> peewee.Field:
        """The model's field for batch column ``name``."""
        return getattr(self.model, self.prefix + name)

    def value(self, record: Any, name: str) -> Any:
        """Batch column ``name`` of ``record``."""
        return getattr(record, self.prefix + name)

    def fresh(self) -> Any:
        """The row as stored now."""
        return self.model.get_by_id(self.row_id)

    def _update(self, values: Mapping[str, Any], where: peewee.Expression | None = None
                ) -> int:
        changes = {self.column(k): v for k, v in values.items()}
        if hasattr(self.model, "updated_at"):
            changes[self.model.updated_at] = utcnow()
        condition = self.model.id == self.row_id
        if where is not None:
            condition &= where
        return int(self.model.update(changes).where(condition).execute())

    def store_signed(self, payload: Mapping[str, Any], wallet: TradingWallet,
                     lease_owner: str) -> None:
        """Write the body before it leaves (signed, or an unsigned ``WALLET-CREATE``): only
        while the wallet's lease is ours and the row holds no body (never over another
        run's)."""
        # a PROXY / SAFE transaction has no deadline: it stays valid until its nonce is used;
        # a WALLET-CREATE has neither
        nonce = payload.get("nonce")
        deadline = payload.get("depositWalletParams", {}).get("deadline")
        with db.atomic():
            wallet_transactions.renew_lease(wallet, lease_owner)
            written = self._update(
                {"nonce": None if nonce is None else int(nonce),
                 "deadline": None if deadline is None else int(deadline),
                 "payload": json.dumps(payload)},
                self.column("transaction_id").is_null() & self.column("payload").is_null())
            if written != 1:
                raise BatchPending("Another run stored a batch for this row meanwhile.")

    def restore_signed(self, refused: Mapping[str, Any], payload: Mapping[str, Any],
                       wallet: TradingWallet, lease_owner: str) -> None:
        """Replace the stored body the relayer refused (so never took) with its re-signed
        form, before that leaves: only while the lease is ours, the row has no relayer id
        and still holds exactly the refused body."""
        with db.atomic():
            wallet_transactions.renew_lease(wallet, lease_owner)
            written = self._update(
                {"nonce": int(payload["nonce"]), "payload": json.dumps(payload)},
                self.column("transaction_id").is_null()
                & (self.column("payload") == json.dumps(refused)))
            if written != 1:
                raise BatchPending("Another run changed this row's batch meanwhile.")

    def store_id(self, transaction_id: str) -> None:
        """Record the relayer's id of the submitted batch."""
        self._update({"transaction_id": transaction_id})

    def store_hash(self, transaction_hash: str | None) -> None:
        """Record the chain hash of the batch the relayer ran."""
        if transaction_hash:
            self._update({"transaction_hash": transaction_hash})

    def forget_signed(self) -> None:
        """Drop a stored batch that provably never ran and never can."""
        self._update({"nonce": None, "deadline": None, "payload": None},
                     self.column("transaction_id").is_null())


# Every kind of row that stores relayer batches: a nonce consumed by one of them is known.
# (A deployment's WALLET-CREATE has no nonce: ``ambiguous`` adds its rows.)
def _registry() -> tuple[BatchRow, ...]:
    return (BatchRow(Withdrawal, None), BatchRow(Claim, None),
            BatchRow(CollateralWrap, None, ""), BatchRow(WalletApproval, None))


def sign_steps(auth: RelayerAuth, wallet: TradingWallet, key: OrderKey, calls: list[Call],
               metadata: str, clock: Callable[[], float] = time.time
               ) -> Steps[Mapping[str, Any]]:
    """The signed body running ``calls`` from the account's maker wallet: a ``WALLET`` batch
    from a deposit wallet, a ``PROXY`` / ``SAFE`` transaction from a proxy or Safe."""
    contracts = trading_accounts.contracts()
    maker = wallets.maker(wallet)
    if wallet.signature_type == SIGNATURE_TYPE_DEPOSIT_WALLET:
        return relayer.sign_wallet_batch(auth, key, chain_id=contracts.chain_id,
                                         factory=contracts.deposit_wallet_factory,
                                         wallet=maker, calls=calls,
                                         session_signer=wallet.session_signer,
                                         metadata=metadata, clock=clock)
    return relayer.sign_legacy_batch(auth, key, signature_type=wallet.signature_type,
                                     contracts=contracts, wallet=maker, calls=calls,
                                     metadata=metadata)


def _nonce_now(auth: RelayerAuth, wallet: TradingWallet, signer: str) -> Steps[int]:
    """The relayer's nonce of the account's wallet now (by the wallet's kind)."""
    if wallet.signature_type == SIGNATURE_TYPE_POLY_PROXY:
        _relay, nonce = yield RelayerApi.relay_payload_call(auth, signer)
        return nonce
    kind = "SAFE" if wallet.signature_type == SIGNATURE_TYPE_GNOSIS_SAFE else "WALLET"
    return (yield RelayerApi.execute_params_call(auth, signer, kind))


def _one(call: Any) -> Any:
    return (yield call)


def _run(steps: Steps[Any], sleep: Callable[[float], None] = time.sleep) -> Any:
    """Drive relayer steps over the runtime's venue client."""
    return relayer.run_steps(steps, venues.client().transport.run, sleep)


def _refusal(exc: VenueError) -> tuple[int, str]:
    return (429 if isinstance(exc, VenueRateLimited) else getattr(exc, "status", 0)), str(exc)


def _sole_signer(wallet: TradingWallet) -> bool:
    """Whether every batch of the wallet is signed here: a deposit wallet this server
    created, its owner key held only here, no session key (its owner signs elsewhere)."""
    return (wallet.account_kind == KIND_DEPOSIT_WALLET and not wallet.session_signer
            and wallet.signature_type == SIGNATURE_TYPE_DEPOSIT_WALLET)


def _taken_by_another(row: BatchRow, wallet: TradingWallet, auth: RelayerAuth,
                      nonce: int) -> bool:
    """Whether another row's batch with ``nonce`` ran (the relayer says so by its id)."""
    for other in _registry():
        model = other.model
        query = model.select().where((model.wallet == wallet.id)
                                     & (other.column("nonce") == nonce)
                                     & other.column("transaction_id").is_null(False))
        for record in query:
            if model is row.model and record.id == row.row_id:
                continue
            try:
                seen = _run(_one(RelayerApi.transaction_call(
                    other.value(record, "transaction_id"), auth)))
            except VenueError:
                continue
            if seen.state in (TransactionState.EXECUTED, TransactionState.MINED,
                              TransactionState.CONFIRMED):
                return True
    return False


def _held_elsewhere(row: BatchRow, wallet: TradingWallet, nonce: int) -> bool:
    """Whether another row of the wallet holds a stored batch with ``nonce`` whose fate is
    unknown (sent or not, no relayer id): it may still run, or may be what ran."""
    for other in _registry():
        model = other.model
        query = model.select(model.id).where((model.wallet == wallet.id)
                                             & (other.column("nonce") == nonce)
                                             & other.column("payload").is_null(False)
                                             & other.column("transaction_id").is_null())
        if any(not (model is row.model and found.id == row.row_id) for found in query):
            return True
    return False


def _same_body(seen: RelayerTransaction, payload: Mapping[str, Any]) -> bool:
    """Whether the relayer's listed transaction is the stored body: a signed one by its
    signature and nonce (the very bytes); an unsigned ``WALLET-CREATE`` by its type and
    owner, unless the relayer ended it FAILED/INVALID (an earlier attempt that did nothing,
    never this row's to follow)."""
    if payload.get("type") == CREATE:
        return (seen.kind == CREATE and seen.state not in ENDED_UNRUN
                and (seen.sender or "").lower() == str(payload.get("from", "")).lower())
    signature = str(payload.get("signature", "")).lower()
    return bool(signature and (seen.signature or "").lower() == signature
                and str(seen.nonce) == str(payload.get("nonce")))


def _listed(row: BatchRow, auth: RelayerAuth, payload: Mapping[str, Any]) -> str | None:
    """The relayer's id of the stored body when its list of our transactions
    (``GET /transactions``) holds it (``_same_body``), now stored on the row; None when the
    list does not show it or does not answer."""
    try:
        listed = _run(_one(RelayerApi.transactions_call(auth)))
    except VenueError:
        return None  # no proof either way: the caller goes on as it would without it
    for seen in listed:
        if _same_body(seen, payload):
            row.store_id(seen.transaction_id)
            return seen.transaction_id
    return None


def _lost(row: BatchRow, auth: RelayerAuth, payload: Mapping[str, Any],
          exc: VenueError) -> str:
    """A send whose answer was lost: the relayer's id when it lists the bytes as taken;
    else BatchAmbiguous (they may run)."""
    found = _listed(row, auth, payload)
    if found is None:
        raise BatchAmbiguous(LOST_ANSWER) from exc
    return found


def _stored(row: BatchRow, record: Any, wallet: TradingWallet, auth: RelayerAuth,
            signer: str, clock: Callable[[], float]) -> str | None:
    """A stored batch without the relayer's id: its id when the relayer lists it or once
    resent (the same bytes), or None when it provably can never run (forgotten: sign
    afresh); else raises."""
    payload = json.loads(row.value(record, "payload"))
    found = _listed(row, auth, payload)  # the relayer took them: follow that transaction
    if found is not None:
        return found
    nonce, deadline = int(row.value(record, "nonce")), row.value(record, "deadline")
    for _look in range(2):  # a resend may find the nonce moved meanwhile: look once more
        try:
            nonce_now = _run(_nonce_now(auth, wallet, signer))
        except VenueError as exc:
            raise BatchPending(f"The relayer did not answer ({exc}).") from exc
        if nonce_now != nonce and payload.get("type") == "WALLET":
            # ACCOUNTS.md §12: the execute-params nonce can be another deposit wallet's of
            # the same owner. Sent these very bytes, the relayer takes them (the nonce had
            # not moved) or names this wallet's own nonce, which decides instead.
            sent = _resend(row, auth, payload)
            if isinstance(sent, str):
                return sent
            if sent is None:
                raise BatchPending("The relayer refused the stored batch's nonce without "
                                   "naming the wallet's; the next run looks again.")
            nonce_now = sent
            if nonce_now < nonce:
                # refused now, and no send of it was ever taken (the wallet would be past
                # its nonce): it never ran and never can
                row.forget_signed()
                return None
        if nonce_now > nonce:
            if _taken_by_another(row, wallet, auth, nonce):
                row.forget_signed()
                return None
            if _sole_signer(wallet) and not _held_elsewhere(row, wallet, nonce):
                raise BatchExecuted(
                    "Sent, then the relayer's answer was lost; the wallet has since used "
                    f"this batch's nonce {nonce}, and only this batch could use it: it ran. "
                    "The relayer's id and the chain hash are not known.")
            raise BatchAmbiguous(
                f"Sent, then the relayer's answer was lost; the wallet has since used this "
                f"batch's nonce {nonce}, perhaps by this batch, perhaps by one signed "
                "elsewhere. It is never sent again: check the wallet's balance, then an "
                "operator settles it.")
        if deadline is not None and clock() > int(deadline) + DEADLINE_SLACK_SECONDS:
            row.forget_signed()  # expired with its nonce unused: it never ran, never can
            return None
        sent = _resend(row, auth, payload)
        if isinstance(sent, str):
            return sent
    raise BatchPending("The wallet's nonce is moving; the next run looks again.")


def _resend(row: BatchRow, auth: RelayerAuth, payload: Mapping[str, Any]
            ) -> str | int | None:
    """Send the stored body again, as it is: the relayer's id (stored), or, when the
    relayer says the batch's nonce does not match (look at it again), the wallet's nonce
    it names (None: it names none); else raises."""
    try:
        sent = _run(relayer.submit_with_retry(auth, payload))
    except (VenueRejected, VenueRateLimited) as exc:
        status, message = _refusal(exc)
        if status == 400 and "does not match on-chain nonce" in message:
            return onchain_nonce(status, message)
        if resubmittable(status, message):
            raise BatchPending(f"The relayer is busy with this wallet ({exc}); this "
                               "transaction may be the one running.") from exc
        # refused now, but an earlier send of the same bytes may still run
        raise BatchAmbiguous(f"The relayer refused to take the stored transaction again "
                             f"({exc}); an earlier send of it may still run, so it is "
                             "not made afresh until that is known.") from exc
    except VenueError as exc:
        return _lost(row, auth, payload, exc)
    row.store_id(sent.transaction_id)
    return str(sent.transaction_id)


def _fresh(row: BatchRow, wallet: TradingWallet, auth: RelayerAuth, key: OrderKey,
           calls: list[Call], metadata: str, lease_owner: str,
           clock: Callable[[], float]) -> str:
    """Sign once, store the bytes, send them: the relayer's id."""
    try:
        payload = _run(sign_steps(auth, wallet, key, calls, metadata, clock))
    except VenueError as exc:
        raise BatchPending(f"The relayer did not answer ({exc}); nothing was signed.") from exc
    nonce = int(payload["nonce"])
    if _held_elsewhere(row, wallet, nonce):
        # Another row's batch with this nonce may still run (its answer was lost, the
        # relayer still has it): a second batch with the nonce would make a consumed nonce
        # say nothing about which ran. This signature is dropped unsent; the next run signs
        # once that batch is settled.
        raise BatchPending(f"Another batch of this wallet with nonce {nonce} may still run; "
                           "this one is signed once that one is settled. Nothing was sent.")
    return _send_first(row, wallet, auth, payload, lease_owner, key)


def _renonced(row: BatchRow, wallet: TradingWallet, key: OrderKey | None,
              payload: Mapping[str, Any], exc: VenueError,
              lease_owner: str) -> Mapping[str, Any] | None:
    """The refused first body re-signed with the nonce the refusal names, stored in its
    place (never sent yet), or None when the refusal names none or this is no first
    ``WALLET`` batch of this run.

    ACCOUNTS.md §12: with two deposit wallets under one owner key,
    ``/v1/account/transactions/params`` can hand out the other wallet's nonce; the relayer
    then refuses with ``batch nonce X does not match on-chain nonce Y`` and the SDKs sign
    once more with Y (ts-sdk ``extractOnChainNonceFromSubmitError`` and
    ``resignDepositWalletExecuteRequest``, PR #247; py-sdk PR #213)."""
    status, message = _refusal(exc)
    named = onchain_nonce(status, message)
    if (key is None or named is None or payload.get("type") != "WALLET"
            or named == int(payload["nonce"])):
        return None
    if _held_elsewhere(row, wallet, named):
        return None  # another unsettled batch of this wallet holds that nonce
    chain_id = trading_accounts.contracts().chain_id
    again = relayer.resign_wallet_batch(payload, key, chain_id=chain_id, nonce=named,
                                        session_signer=bool(wallet.session_signer))
    row.restore_signed(payload, again, wallet, lease_owner)
    return again


def _send_first(row: BatchRow, wallet: TradingWallet, auth: RelayerAuth,
                payload: Mapping[str, Any], lease_owner: str,
                key: OrderKey | None = None) -> str:
    """Store the body made under this lease, then send it: the relayer's id (stored).
    A refusal naming the wallet's nonce is answered once: the body re-signed with it,
    stored in place of the refused one, then sent (``_renonced``); never a second time."""
    row.store_signed(payload, wallet, lease_owner)
    resigned = False
    while True:
        try:
            sent = _run(relayer.submit_with_retry(auth, payload))
        except (VenueRejected, VenueRateLimited) as exc:
            again = None if resigned else _renonced(row, wallet, key, payload, exc,
                                                    lease_owner)
            if again is not None:
                payload, resigned = again, True
                continue
            _refused_first(row, exc)
        except VenueError as exc:
            return _lost(row, auth, payload, exc)
        row.store_id(sent.transaction_id)
        return str(sent.transaction_id)


def _refused_first(row: BatchRow, exc: VenueError) -> NoReturn:
    """The relayer refused a body made under this lease and never sent before: it never
    took it, so it can never run: forgotten, and BatchPending (try afresh) or BatchRefused."""
    row.forget_signed()
    status, message = _refusal(exc)
    if status == 429 or wallet_busy(message) or "does not match on-chain nonce" in message:
        raise BatchPending(f"The relayer did not take the transaction now ({exc}); "
                           "nothing was sent, the next run makes it afresh.") from exc
    raise BatchRefused(f"The relayer refused: {exc}") from exc


def _unless_known(row: BatchRow, wallet: TradingWallet,
                  send: Callable[[Any, RelayerAuth], str]) -> str:
    """The relayer's id of the row's transaction when stored, else ``send(record, auth)``
    with the row as stored now (BatchRefused without relayer credentials)."""
    record = row.fresh()
    if row.value(record, "transaction_id"):
        return str(row.value(record, "transaction_id"))
    auth = trading_accounts.relayer_auth(wallet)
    if auth is None:
        raise BatchRefused(BUILDER_MISSING)
    return send(record, auth)


def submit(row: BatchRow, wallet: TradingWallet, calls: Callable[[Any], list[Call]],
           metadata: str, lease_owner: str, clock: Callable[[], float] = time.time) -> str:
    """Under the wallet's lease (``lease_owner``): the relayer's id of the row's batch,
    sending it once if needed. Raises BatchRefused, BatchPending, BatchAmbiguous or
    BatchExecuted (see the module docstring)."""

    def send(record: Any, auth: RelayerAuth) -> str:
        key = OrderKey(wallets.signer(wallet))
        if row.value(record, "payload"):
            sent = _stored(row, record, wallet, auth, key.address, clock)
            if sent is not None:
                return sent
        return _fresh(row, wallet, auth, key, calls(record), metadata, lease_owner, clock)

    return _unless_known(row, wallet, send)


def submit_leased(row: BatchRow, wallet: TradingWallet, calls: Callable[[Any], list[Call]],
                  metadata: str) -> str:
    """``submit`` under the wallet's lease, taken here (BatchPending while another run
    holds it)."""
    try:
        with wallet_transactions.nonce_lease(wallet) as owner:
            return submit(row, wallet, calls, metadata, owner)
    except errors.Conflict as exc:
        raise BatchPending(exc.message) from exc


def submit_create(row: BatchRow, wallet: TradingWallet, metadata: str, lease_owner: str
                  ) -> str:
    """Under the wallet's lease: the relayer's id of the row's ``WALLET-CREATE`` (the
    deposit wallet's deployment), sending it once if needed. Its body is not signed and the
    wallet's address is fixed by its owner, so a second one can deploy nothing more; still
    a stored body is only resent when the relayer does not list it and the wallet has no
    code yet (deployed: it ran, BatchExecuted). Raises like ``submit``."""

    def send(record: Any, auth: RelayerAuth) -> str:
        stored = row.value(record, "payload")
        if stored is None:
            contracts = trading_accounts.contracts()
            body = wallet_create_payload(wallet.address, contracts.deposit_wallet_factory,
                                         metadata)
            return _send_first(row, wallet, auth, body, lease_owner)
        return _create_stored(row, wallet, auth, json.loads(stored))

    return _unless_known(row, wallet, send)


def _create_stored(row: BatchRow, wallet: TradingWallet, auth: RelayerAuth,
                   body: Mapping[str, Any]) -> str:
    """A stored ``WALLET-CREATE`` without the relayer's id: its id when the relayer lists
    it or once resent; BatchExecuted when the wallet has code since; else raises."""
    found = _listed(row, auth, body)  # the relayer took it: follow that transaction
    if found is not None:
        return found
    try:
        deployed = _run(_one(RelayerApi.deployed_call(wallets.maker(wallet))))
    except VenueError as exc:
        raise BatchPending(f"The relayer did not answer ({exc}).") from exc
    if deployed:
        raise BatchExecuted("Sent, then the relayer's answer was lost; the wallet has been "
                            "deployed since: it ran. The relayer's id is not known.")
    sent = _resend(row, auth, body)
    if not isinstance(sent, str):  # a nonce refusal: not a WALLET-CREATE's, nothing proved
        raise BatchPending("The relayer did not take the deployment again; the next run "
                           "looks again.")
    return sent


def follow(wallet: TradingWallet, transaction_id: str, lease_owner: str | None = None,
           max_polls: int | None = None) -> RelayerTransaction:
    """Wait for the batch's final state, renewing the wallet's lease between polls: the
    transaction at CONFIRMED; RelayerTransactionFailed at FAILED or INVALID (with the
    relayer's reason); BatchPending while it is not final."""
    auth = trading_accounts.relayer_auth(wallet)

    def sleep(seconds: float) -> None:
        time.sleep(seconds)
        if lease_owner is not None:
            wallet_transactions.renew_lease(wallet, lease_owner)

    try:
        return _run(await_final(transaction_id, auth, max_polls=max_polls or FOLLOW_POLLS),
                    sleep)  # type: ignore[no-any-return]
    except RelayerTransactionFailed:
        raise
    except (VenueError, errors.Conflict) as exc:
        raise BatchPending(f"The relayer has not finished the batch yet ({exc}).") from exc


@dataclass
class RelayerTransport:
    """The lifecycle's relayer transport: the row's one relayer transaction sent once
    (``submit``, given the lease's owner: a batch's ``submit`` or a deployment's
    ``submit_create``), then followed to a final state under the wallet's lease."""

    row: BatchRow
    wallet: TradingWallet
    submit: Callable[[str], str]
    noun: str
    max_polls: int | None = None
    follows_under_lease: bool = True
    takes_row_before_signing: bool = True
    unsent: peewee.Expression | None = None

    def prepare(self, record: Any) -> None:
        """Nothing to settle first."""

    def send(self, record: Any, lease_owner: str) -> None:
        """``submit`` (see there)."""
        try:
            self.submit(lease_owner)
        except errors.Conflict as exc:  # the lease lost while storing: nothing was sent
            raise wallet_lifecycle.Pending(exc.message) from exc

    def follow(self, record: Any, lease_owner: str | None) -> None:
        """Follow the batch; the chain hash stored once it ran."""
        try:
            done = follow(self.wallet, self.row.value(self.row.fresh(), "transaction_id"),
                          lease_owner, self.max_polls)
        except RelayerTransactionFailed as exc:
            # a FAILED / INVALID transaction ran none of its calls
            raise wallet_lifecycle.Failed(
                f"The relayer ended the {self.noun} {exc.transaction.state}: "
                f"{exc.transaction.error or 'no reason given'}. Nothing was sent; try again."
            ) from exc
        self.row.store_hash(done.transaction_hash)


def run(row: BatchRow, wallet: TradingWallet, calls: Callable[[Any], list[Call]],
        metadata: str, noun: str, max_polls: int | None = None) -> str:
    """Drive a batch's row through the one lifecycle over the relayer (``calls(record)``
    builds its calls, only ever for a fresh signature); its status (an open one means: run
    again later)."""
    return wallet_lifecycle.run(row.model, row.row_id, wallet, RelayerTransport(
        row, wallet, lambda owner: submit(row, wallet, calls, metadata, owner), noun,
        max_polls))


def deploy(row: BatchRow, wallet: TradingWallet, metadata: str) -> str:
    """Drive a deployment's row (``WALLET-CREATE``) through the one lifecycle over the
    relayer; its status (an open one means: run again later)."""
    return wallet_lifecycle.run(row.model, row.row_id, wallet, RelayerTransport(
        row, wallet, lambda owner: submit_create(row, wallet, metadata, owner), "deployment"))


def ambiguous() -> list[dict[str, Any]]:
    """Every withdrawal, claim, wrap, approvals batch and deployment whose relayer
    transaction may have run or may still run (status ``ambiguous``), oldest first, with its
    age: what an operator must settle."""
    now = utcnow()
    found = []
    for row in (*_registry(), BatchRow(WalletDeployment, None)):
        model = row.model
        for record in model.select().where(model.status == AMBIGUOUS):
            found.append({
                "kind": model.__name__.lower(), "id": str(record.id),
                "wallet": wallets.maker(record.wallet),
                "amount": getattr(record, "amount", None) or getattr(record, "payout", None),
                "nonce": row.value(record, "nonce"),
                "age_seconds": (now - record.updated_at).total_seconds(),
                "since": record.updated_at.isoformat(), "error": record.error})
    return sorted(found, key=lambda item: -item["age_seconds"])


def transaction_hash(row: BatchRow, record: Any) -> str | None:
    """The chain hash of the row's batch, once the relayer ran it."""
    return row.value(record, "transaction_hash")


__all__ = [
    "BatchAmbiguous",
    "BatchExecuted",
    "BatchPending",
    "BatchRefused",
    "BatchRow",
    "RelayerTransport",
    "ambiguous",
    "deploy",
    "follow",
    "run",
    "sign_steps",
    "submit",
    "submit_create",
    "submit_leased",
    "transaction_hash",
]
