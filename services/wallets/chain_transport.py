"""The on-chain transport of the one wallet lifecycle (services/wallets/wallet_lifecycle.py):
a plain EOA's own transaction, through ``wallet_transactions`` (a fresh nonce, the raw bytes
stored and linked to the row before broadcast, re-broadcast never re-signed, the receipt).

The row's link column (``transaction``) is filled at most once, by a conditional UPDATE
under the wallet's lease. A transaction is signed afresh only once its row is failed: the
node refused it before anyone took it (``dropped``), or another transaction was mined with
its nonce (``replaced``), both proofs that it can never be mined.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import peewee

from chain.errors import ChainError, ChainUnavailable
from models.base import utcnow
from models.wallet import (
    CONFIRMED,
    FAILED,
    OPEN_STATES,
    SIGNED,
    TX_CONFIRMED,
    TX_FAILED,
    TX_IN_FLIGHT,
    TX_REPLACED,
    TradingWallet,
    WalletTransaction,
)
from services.platform import errors
from services.wallets import wallet_transactions
from services.wallets.wallet_lifecycle import Failed, Pending, Refused

UNREACHABLE = "The chain RPC was unreachable; nothing was sent. Try again."


def ended(tx: WalletTransaction, noun: str) -> str:
    """Why a settled transaction did nothing, for the row it was signed for."""
    if tx.status == TX_FAILED:
        return f"The {noun} was mined but reverted; nothing was sent."
    if tx.status == TX_REPLACED:
        return (f"Another transaction from the trading wallet took this {noun}'s nonce; "
                "nothing was sent.")
    return f"The network refused the {noun}; nothing was sent. ({tx.error})"


def sync(model: type[peewee.Model], row_id: Any, tx: WalletTransaction, noun: str) -> None:
    """Record a settled transaction's outcome on its row, if the row is still open (what
    the row's own run would record when it follows it)."""
    if tx.status in TX_IN_FLIGHT:
        return
    confirmed = tx.status == TX_CONFIRMED
    (model.update({model.status: CONFIRMED if confirmed else FAILED,
                   model.error: None if confirmed else ended(tx, noun),
                   model.updated_at: utcnow()})
     .where((model.id == row_id) & model.status.in_(OPEN_STATES)).execute())


def send(wallet: TradingWallet, kind: str, build: wallet_transactions.Builder,
         link: wallet_transactions.Link, lease_owner: str | None = None) -> None:
    """The link's one transaction signed (stored and linked first) and broadcast, under the
    wallet's lease (``lease_owner``'s, or taken here). Raises Refused when nothing was
    signed (or the node refused the stored bytes), Pending when the next run must look."""
    try:
        if lease_owner is None:
            wallet_transactions.submit(wallet, kind, build, link=link)
        else:
            wallet_transactions.submit_leased(wallet, kind, build, link, lease_owner)
    except errors.PaymentRequired as exc:  # checked again under the lease, before signing
        raise Refused(exc.message, exc.message) from exc
    except errors.CryptoError as exc:
        raise Refused("The wallet key could not be decrypted.",
                      "The wallet key could not be decrypted; nothing was sent.") from exc
    except errors.CopytradeError as exc:  # the lease lost, or another run linked one
        raise Pending(exc.message, raise_after=exc) from exc
    except ChainUnavailable as exc:
        if link.linked()[0] is None:
            raise Refused(str(exc), UNREACHABLE) from exc
        raise Pending("The chain RPC did not answer; the stored transaction is sent again "
                      "by the next run.", raise_after=exc) from exc
    except ChainError as exc:
        tx = link.linked()[0]
        message = wallet_transactions.as_chain_error_message(exc)
        if tx is None:
            raise Refused(message, message) from exc
        if tx.status not in TX_IN_FLIGHT:  # the node refused the stored bytes: dropped
            raise Refused(message, ended(tx, kind)) from exc
        raise Pending(message, raise_after=exc) from exc


def settled(tx: WalletTransaction, noun: str, timeout: float | None = None,
            raise_pending: bool = False) -> None:
    """Wait for the transaction's receipt: returns once it is confirmed; Failed when it
    did nothing, Pending while it is not mined (or the chain does not answer; then the job
    fails once the row is written, as it does with ``raise_pending`` while unmined)."""
    try:
        done = wallet_transactions.settle(tx, timeout)
    except ChainError as exc:
        raise Pending(f"The chain did not answer about {tx.tx_hash} ({exc}).",
                      raise_after=exc) from exc
    if done.status in TX_IN_FLIGHT:
        message = f"The {noun} {done.tx_hash} is not mined yet; the next run looks."
        raise Pending(message, raise_after=errors.Unavailable(message) if raise_pending
                      else None)
    if done.status != TX_CONFIRMED:
        raise Failed(ended(done, noun))


@dataclass
class ChainTransport:
    """The lifecycle's on-chain transport for one row (its ``transaction`` link): ``build``
    signs with the nonce given; ``before(record)`` settles what must be mined first."""

    model: type[peewee.Model]
    row_id: Any
    wallet: TradingWallet
    kind: str  # the WalletTransaction's kind, and the noun its messages use
    build: wallet_transactions.Builder
    before: Callable[[Any], None] | None = None
    follows_under_lease: bool = False  # a receipt wait holds no nonce: others may sign
    takes_row_before_signing: bool = False  # the link writes ``signed`` with the bytes
    unsent: peewee.Expression | None = field(init=False)

    def __post_init__(self) -> None:
        self.unsent = self.model.transaction.is_null()

    def _link(self) -> wallet_transactions.Link:
        return wallet_transactions.Link(self.model, self.row_id, "transaction",
                                        {"status": SIGNED})

    def prepare(self, record: Any) -> None:
        """``before`` (e.g. a neg-risk claim's approval, mined first)."""
        if self.before is not None and record.transaction_id is None:
            self.before(record)

    def send(self, record: Any, lease_owner: str) -> None:
        """The row's one transaction out (see ``send``)."""
        send(self.wallet, self.kind, self.build, self._link(), lease_owner)

    def follow(self, record: Any, lease_owner: str | None) -> None:
        """Wait for the receipt (see ``settled``)."""
        settled(self.model.get_by_id(self.row_id).transaction, self.kind)


__all__ = ["UNREACHABLE", "ChainTransport", "ended", "send", "settled", "sync"]
