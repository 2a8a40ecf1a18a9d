"""Sending from a trading wallet exactly once: nonce allocation, persist-then-broadcast, receipts.

One fencing rule for everything that signs from a wallet (``submit``):

1. take the wallet's signing lease in the database (one signer per wallet at a time,
   across threads and processes);
2. re-read the record the transaction is for (a withdrawal, a claim) UNDER the lease: if an
   earlier or concurrent run already linked a transaction, re-broadcast its stored bytes and
   never sign again;
3. re-broadcast the wallet's other in-flight transactions, mark those whose nonce was mined
   by another hash ``replaced`` (they no longer reserve anything), and allocate the lowest
   free nonce;
4. sign, then in ONE database transaction: check the lease is still ours (and renew it),
   store the raw bytes and hash, and link them to the record with a conditional UPDATE
   (``... WHERE transaction IS NULL``); a lost lease or a lost link rolls it all back and
   nothing is sent. A partial unique index refuses two in-flight rows with one nonce;
5. only then broadcast.

A crash at any point is recovered by broadcasting the stored bytes again: a transfer is
never signed twice. ``settle`` waits for the receipt and records block, status and gas fee.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import peewee
from web3 import Web3

from chain.errors import (
    ChainError,
    ChainUnavailable,
    InsufficientGas,
    ReceiptTimeout,
    TransactionRejected,
)
from chain.tokens import NATIVE_DECIMALS, from_base_units
from chain.transactions import (
    Receipt,
    SignedTx,
    lookup_receipt,
    mined_nonce,
    next_nonce,
    send_raw,
    wait_receipt,
)
from models.base import db, utcnow
from models.wallet import (
    FAILED,
    OPEN_STATES,
    TX_BROADCAST,
    TX_CONFIRMED,
    TX_DROPPED,
    TX_FAILED,
    TX_IN_FLIGHT,
    TX_REPLACED,
    TX_SIGNED,
    TradingWallet,
    WalletTransaction,
)
from schemas.fields import format_decimal
from services.platform import chain_access, errors
from services.wallets import wallets

log = logging.getLogger(__name__)

LEASE_WAIT_SECONDS = 30.0
_LEASE_POLL_SECONDS = 0.05

# build(w3, private_key, nonce) -> SignedTx; may raise before anything is persisted
Builder = Callable[[Web3, bytes, int], SignedTx]

LEASE_LOST = ("The trading wallet's signing lease ran out before the transaction was stored "
              "(a slow chain RPC); nothing was sent. The job retries.")


@dataclass(frozen=True)
class Link:
    """The record a transaction is signed for (a withdrawal, a claim) and its link column.

    The column is filled at most once, by a conditional UPDATE; ``changes`` are written
    with it (the record's status). The model has ``id``, ``status``, ``error`` and
    ``updated_at`` columns, and open records are in ``OPEN_STATES``.
    """

    model: type[peewee.Model]
    row_id: Any
    field: str
    changes: Mapping[str, Any] = field(default_factory=dict)

    def _column(self) -> peewee.Field:
        return getattr(self.model, self.field)

    def _unlinked_and_open(self) -> peewee.Expression:
        model = self.model
        return ((model.id == self.row_id) & self._column().is_null()
                & model.status.in_(OPEN_STATES))

    def linked(self) -> tuple[WalletTransaction | None, bool]:
        """The transaction already linked (or None), and whether the record is still open."""
        row = self.model.get_by_id(self.row_id)
        tx_id = getattr(row, f"{self.field}_id")
        tx = WalletTransaction.get_by_id(tx_id) if tx_id is not None else None
        return tx, row.status in OPEN_STATES

    def attach(self, tx: WalletTransaction) -> bool:
        """Link ``tx`` unless another transaction is linked or the record closed; True if done."""
        values = {self._column(): tx.id, self.model.updated_at: utcnow()}
        values.update({getattr(self.model, k): v for k, v in self.changes.items()})
        return self.model.update(values).where(self._unlinked_and_open()).execute() == 1

    def fail_unsent(self, message: str) -> bool:
        """Mark the record failed if nothing is linked and it is open; True if this did it.

        Conditional, so a run that lost a race never overwrites the winner's truth with
        "nothing was sent".
        """
        model = self.model
        return (model.update({model.status: FAILED, model.error: message,
                              model.updated_at: utcnow()})
                .where(self._unlinked_and_open()).execute()) == 1


def lease_seconds() -> int:
    """How long a signing lease holds between renewals (WALLET_SIGNING_LEASE_SECONDS)."""
    return chain_access.current().signing_lease_seconds


@contextlib.contextmanager
def nonce_lease(wallet: TradingWallet, *, seconds: int | None = None,
                wait: float = LEASE_WAIT_SECONDS) -> Iterator[str]:
    """Hold the wallet's signing lease (an atomic conditional UPDATE); Conflict if busy."""
    owner = uuid.uuid4().hex
    seconds = seconds or lease_seconds()
    deadline = time.monotonic() + wait
    while True:
        now = utcnow()
        taken = (TradingWallet
                 .update(nonce_lease_owner=owner,
                         nonce_lease_until=now + timedelta(seconds=seconds))
                 .where((TradingWallet.id == wallet.id)
                        & (TradingWallet.nonce_lease_until.is_null()
                           | (TradingWallet.nonce_lease_until < now)))
                 .execute())
        if taken == 1:
            break
        if time.monotonic() >= deadline:
            raise errors.Conflict("The trading wallet is busy sending another transaction; "
                                  "retry shortly.")
        time.sleep(_LEASE_POLL_SECONDS)
    try:
        yield owner
    finally:
        (TradingWallet.update(nonce_lease_owner=None, nonce_lease_until=None)
         .where((TradingWallet.id == wallet.id) & (TradingWallet.nonce_lease_owner == owner))
         .execute())


def renew_lease(wallet: TradingWallet, owner: str, seconds: int | None = None,
                **also: Any) -> None:
    """Check the wallet's lease is still ``owner``'s and renew it (writing ``also`` with
    it); Conflict (roll back) if it was lost."""
    seconds = seconds or lease_seconds()
    held = (TradingWallet
            .update(nonce_lease_until=utcnow() + timedelta(seconds=seconds), **also)
            .where((TradingWallet.id == wallet.id) & (TradingWallet.nonce_lease_owner == owner))
            .execute())
    if held != 1:
        raise errors.Conflict(LEASE_LOST)


def in_flight(wallet: TradingWallet) -> list[WalletTransaction]:
    """The wallet's transactions signed or broadcast and not yet settled, by nonce."""
    return list(WalletTransaction.select()
                .where((WalletTransaction.wallet == wallet.id)
                       & WalletTransaction.status.in_(TX_IN_FLIGHT))
                .order_by(WalletTransaction.nonce))


def _drop(tx: WalletTransaction, reason: str) -> None:
    tx.status, tx.nonce, tx.error, tx.settled_at = TX_DROPPED, None, reason, utcnow()
    tx.save(only=[WalletTransaction.status, WalletTransaction.nonce, WalletTransaction.error,
                  WalletTransaction.settled_at])


def broadcast(tx: WalletTransaction, w3: Web3 | None = None) -> WalletTransaction:
    """Send the stored raw transaction (again); a node that already has it is fine.

    ChainUnavailable leaves it signed for a later retry. A refusal that means it can never
    be mined (nonce taken by another transaction, gas, invalid) drops it and raises.
    """
    w3 = w3 or chain_access.web3()
    try:
        send_raw(w3, tx.raw_tx)
    except ChainUnavailable:
        raise
    except (InsufficientGas, TransactionRejected) as exc:
        if tx.status == TX_SIGNED or not _known(w3, tx.tx_hash):
            _drop(tx, str(exc))
        raise
    if tx.status == TX_SIGNED:
        tx.status, tx.broadcast_at = TX_BROADCAST, utcnow()
        tx.save(only=[WalletTransaction.status, WalletTransaction.broadcast_at])
    return tx


def _known(w3: Web3, tx_hash: str) -> bool:
    try:
        return lookup_receipt(w3, tx_hash) is not None or bool(w3.eth.get_transaction(tx_hash))
    except ChainUnavailable:
        raise
    except Exception:
        return False


def _record_receipt(tx: WalletTransaction, receipt: Receipt) -> WalletTransaction:
    tx.status = TX_CONFIRMED if receipt.succeeded else TX_FAILED
    tx.block_number = receipt.block_number
    tx.gas_used = receipt.gas_used
    tx.gas_fee = from_base_units(receipt.fee_wei, NATIVE_DECIMALS)
    tx.settled_at = utcnow()
    if not receipt.succeeded:
        tx.error = "The transaction was mined but reverted."
    tx.save()
    return tx


def _replace(tx: WalletTransaction) -> WalletTransaction:
    """Another transaction was mined with this one's nonce: it can never be mined."""
    tx.status, tx.settled_at = TX_REPLACED, utcnow()
    tx.error = ("Another transaction from the wallet was mined with this nonce; "
                "this one never can be.")
    tx.save(only=[WalletTransaction.status, WalletTransaction.error,
                  WalletTransaction.settled_at])
    log.warning("wallet tx %s (nonce %s) was replaced on chain", tx.tx_hash, tx.nonce)
    return tx


def refresh(tx: WalletTransaction, w3: Web3 | None = None) -> WalletTransaction:
    """Record the receipt if the transaction has been mined meanwhile (no waiting).

    Without a receipt, a nonce the chain has already mined means another transaction took
    it: the row becomes ``replaced`` and stops reserving its amount.
    """
    if tx.status not in TX_IN_FLIGHT:
        return tx
    w3 = w3 or chain_access.web3()
    receipt = lookup_receipt(w3, tx.tx_hash)
    if receipt is None and tx.nonce is not None:
        address = TradingWallet.get_by_id(tx.wallet_id).address
        if mined_nonce(w3, address) > tx.nonce:
            receipt = lookup_receipt(w3, tx.tx_hash)  # mined between the two reads?
            if receipt is None:
                return _replace(tx)
    return _record_receipt(tx, receipt) if receipt is not None else tx


def _heal(w3: Web3, wallet: TradingWallet, pending: int) -> set[int]:
    """Settle mined in-flight transactions, re-send unmined ones; return nonces still held."""
    held: set[int] = set()
    for tx in in_flight(wallet):
        if refresh(tx, w3).status not in TX_IN_FLIGHT or tx.nonce is None:
            continue
        if tx.nonce < pending:
            continue  # mined or replaced; its own job records the receipt
        try:
            broadcast(tx, w3)
        except (InsufficientGas, TransactionRejected) as exc:
            log.warning("wallet %s: in-flight tx %s dropped: %s", wallet.address, tx.tx_hash, exc)
            continue
        held.add(int(tx.nonce))
        refresh(tx, w3)  # mined at once on a fast chain: then it reserves nothing
    return held


def allocate_nonce(w3: Web3, wallet: TradingWallet) -> int:
    """The next nonce for the wallet; call under its lease. Gaps left by dropped txs are reused."""
    pending = next_nonce(w3, wallet.address)
    held = _heal(w3, wallet, pending)
    nonce = pending
    while nonce in held:
        nonce += 1
    return nonce


def submit(wallet: TradingWallet, kind: str, build: Builder,
           link: Link | None = None) -> WalletTransaction | None:
    """``submit_leased`` under the wallet's lease, taken here (Conflict while busy)."""
    with nonce_lease(wallet) as owner:
        return submit_leased(wallet, kind, build, link, owner)


def submit_leased(wallet: TradingWallet, kind: str, build: Builder, link: Link | None,
                  lease_owner: str) -> WalletTransaction | None:
    """Under the wallet's lease (``lease_owner``'s): sign one transaction with a fresh
    nonce, persist it, then broadcast it (the fencing rule).

    With ``link``, the record is re-read: a transaction already linked is re-broadcast and
    returned (never signed again); a closed record returns None with nothing signed. The
    new transaction is linked in the same database transaction that stores it, only if
    nothing else was linked meanwhile. Errors raised by ``build`` leave nothing behind; a
    lease lost to a slow RPC raises Conflict with nothing stored. The broadcast's own
    failures are raised after persistence: ChainUnavailable leaves the transaction signed
    for a retry, a refusal drops it.
    """
    w3 = chain_access.web3()
    if link is not None:
        existing, still_open = link.linked()
        if existing is not None:
            if existing.status in TX_IN_FLIGHT:
                broadcast(existing, w3)
            return existing
        if not still_open:
            return None
    key = wallets.signer(wallet)
    nonce = allocate_nonce(w3, wallet)
    signed = build(w3, key, nonce)
    try:
        with db.atomic():
            renew_lease(wallet, lease_owner, next_nonce=signed.nonce + 1)
            tx = WalletTransaction.create(
                wallet=wallet.id, kind=kind, chain_id=signed.chain_id, nonce=signed.nonce,
                tx_hash=signed.tx_hash, raw_tx=signed.raw_hex, to_address=signed.to,
                max_cost_wei=str(signed.max_cost_wei), status=TX_SIGNED)
            if link is not None and not link.attach(tx):
                raise errors.Conflict("Another run already signed this transfer; "
                                      "nothing more was sent.")
    except peewee.IntegrityError:
        # the in-flight (wallet, nonce) index: another signer holds this nonce
        raise errors.Conflict(LEASE_LOST) from None
    broadcast(tx, w3)
    return tx


def settle(tx: WalletTransaction, timeout: float | None = None) -> WalletTransaction:
    """Wait for the receipt and record it; a transaction still pending stays in flight."""
    if tx.status not in TX_IN_FLIGHT:
        return tx
    w3 = chain_access.web3()
    if tx.status == TX_SIGNED:
        broadcast(tx, w3)
    if timeout is None:
        timeout = chain_access.current().receipt_timeout_seconds
    try:
        receipt = wait_receipt(w3, tx.tx_hash, timeout=timeout)
    except ReceiptTimeout:
        return refresh(tx, w3)  # replaced meanwhile? then it is settled for good
    return _record_receipt(tx, receipt)


def reserved_wei(wallet: TradingWallet, w3: Web3 | None = None) -> int:
    """MATIC (wei) that unmined in-flight transactions may still spend: gas cap plus value.

    Read it before the balance: a transaction mined in between is then counted twice
    (a refusal to retry), never missed (an overspend).
    """
    w3 = w3 or chain_access.web3()
    total = 0
    for tx in in_flight(wallet):
        if refresh(tx, w3).status in TX_IN_FLIGHT:
            total += int(tx.max_cost_wei or 0)
    return total


def as_chain_error_message(exc: ChainError) -> str:
    """A message for people about a chain failure (no internals)."""
    if isinstance(exc, InsufficientGas):
        return ("The trading wallet has too little MATIC to pay gas: needs "
                f"{matic(exc.needed_wei)} MATIC, has {matic(exc.available_wei)}. "
                "Deposit MATIC to the deposit address.")
    return str(exc)


def matic(wei: int) -> str:
    """Wei as a MATIC decimal string, for messages."""
    return format_decimal(from_base_units(wei, NATIVE_DECIMALS))
