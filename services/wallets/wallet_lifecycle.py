"""The one lifecycle of money (or rights) leaving a wallet (issue 26): withdrawals, claims,
wraps, the onboarding's approvals and the deposit wallet's deployment, over every transport.

The steps, each durable before the next (``run``):

1. the durable record: a row in ``queued`` (withdrawals, claims, wraps, the onboarding's
   approvals: ``WalletApproval``, its deployment: ``WalletDeployment``; the caller wrote
   it);
2. the wallet's lease (``wallet_transactions.nonce_lease``: one signer per wallet at a time,
   across threads and processes), and the row read again under it: what an earlier or
   concurrent run left is the truth;
3. ``Transport.send``: sign once, store the exact bytes (a conditional write that checks the
   lease is still ours and that the row holds no bytes yet: ``signed``), send them; a row
   that holds bytes is only ever resent as they are (``broadcast`` once sent). A
   deployment's ``WALLET-CREATE`` is not signed: its body is stored and sent the same way;
4. ``Transport.follow``: follow them to a final state (``confirmed``, or ``failed`` when the
   chain or the relayer proves they did nothing).

The transport is the only thing that differs: an on-chain transaction from a plain EOA
(``chain_transport.ChainTransport`` over ``wallet_transactions``) or one relayer
transaction (``wallet_batches.RelayerTransport``: a deposit wallet's ``WALLET`` batch, a
proxy's ``PROXY``, a Safe's ``SAFE``, or the deposit wallet's ``WALLET-CREATE``). A
transport answers with one of the outcomes below; the states they lead to, and what each
promises, are in SECURITY.md ("Money moves once").

A new signature is made only once the old bytes provably can never run: on chain, the
nonce was mined by another transaction (``replaced``) or the node refused them before
anyone took them (``dropped``); through the relayer, it refused the very bytes this run
first sent, their deadline passed with the nonce unmoved, its nonce went to another known
transaction, or the relayer ended them FAILED/INVALID. A deployment is never made afresh
on a row: its stored body is resent once the relayer neither lists it nor has deployed the
wallet; a row the relayer ended FAILED is final, and the onboarding's retry makes a new
one. Until then the row is ``ambiguous`` (or stays open), never "nothing was sent".
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

import peewee

from models.base import utcnow
from models.wallet import AMBIGUOUS, BROADCAST, CONFIRMED, FAILED, QUEUED, SIGNED, TradingWallet
from services.platform import chain_access, errors
from services.wallets import wallet_transactions
from venue.accounts.relayer_rules import POLL_INTERVAL_SECONDS, SUBMIT_RETRY_ATTEMPTS

# The states a run of the lifecycle picks up (the others are final).
RUNNABLE = (QUEUED, SIGNED, BROADCAST, AMBIGUOUS)
# One run follows a relayer transaction at most this many polls, renewing the wallet's
# lease as it polls; one still open then is followed by the next run.
FOLLOW_POLLS = 45
# Room for slow answers (RPC reads, the database) on top of the waits counted below.
JOB_SLACK_SECONDS = 90


class Refused(Exception):
    """Refused before anything could run: nothing was sent (``reason`` says why; ``message``
    is what the row records)."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.message = message or f"{reason} Nothing was sent; try again."


class Pending(Exception):
    """No answer yet that decides anything (unreachable, busy, not mined yet, lease lost):
    the row keeps its state and the next run resumes it. ``raise_after`` is raised once the
    row is written (the job fails, so the worker and maintenance run it again)."""

    def __init__(self, message: str, raise_after: BaseException | None = None) -> None:
        super().__init__(message)
        self.raise_after = raise_after


class Ambiguous(Exception):
    """The stored bytes may have run, or may still run: never signed afresh until known."""


class Executed(Exception):
    """The stored bytes ran (proved without the transport's own answer)."""


class Failed(Exception):
    """Followed to a final state that did nothing (reverted, refused, replaced, FAILED):
    ``message`` is what the row records."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Transport(Protocol):
    """How one row's bytes are signed, sent and followed; the lifecycle does the rest."""

    # whether ``follow`` runs under the wallet's lease (renewing it): a relayer batch holds
    # the wallet's nonce until it is final; an on-chain receipt wait holds nothing
    follows_under_lease: bool
    # a condition a failed row must meet (nothing linked), or None
    unsent: peewee.Expression | None
    # whether the lifecycle marks a queued row ``signed`` before ``send`` (a relayer batch's
    # row: then a failed enqueue never fails a row a run may be sending); else the
    # transport writes ``signed`` with the stored bytes (an on-chain link)
    takes_row_before_signing: bool

    def prepare(self, record: Any) -> None:
        """Outside the lease, before sending: what must be final first (an approval)."""

    def send(self, record: Any, lease_owner: str) -> None:
        """Under the lease: the row's one signature sent (signed and stored first when
        the row holds none). Raises Refused, Pending, Ambiguous or Executed."""

    def follow(self, record: Any, lease_owner: str | None) -> None:
        """The sent bytes followed to their final state (the hash stored when known).
        Raises Failed or Pending."""


def job_timeout() -> int:
    """The time limit of a job of this lifecycle: it ends within the lease wait, a relayer
    submit with its resubmissions and a follow, or two receipt waits on chain (a neg-risk
    claim's approval, then its redeem), with room for slow answers. So the worker never
    abandons a run that still works (it would be re-queued beside itself)."""
    relayer = (2 * SUBMIT_RETRY_ATTEMPTS + FOLLOW_POLLS) * POLL_INTERVAL_SECONDS
    chain = 2 * chain_access.current().receipt_timeout_seconds
    return int(wallet_transactions.LEASE_WAIT_SECONDS + max(relayer, chain) + JOB_SLACK_SECONDS)


class _Row:
    """One durable record of the lifecycle (a model with ``status``, ``error``,
    ``updated_at``), changed only by conditional updates."""

    def __init__(self, model: type[peewee.Model], row_id: Any) -> None:
        self.model, self.row_id = model, row_id

    def fresh(self) -> Any:
        return self.model.get_by_id(self.row_id)

    def move(self, record: Any, expected: tuple[str, ...],
             where: peewee.Expression | None = None, **changes: Any) -> bool:
        """Change the row only if it is still in one of ``expected`` (one runner wins)."""
        model = self.model
        values = {getattr(model, k): v for k, v in changes.items()}
        values[model.updated_at] = utcnow()
        condition = (model.id == self.row_id) & model.status.in_(expected)
        if where is not None:
            condition &= where
        moved = model.update(values).where(condition).execute()
        if moved:
            for name, value in changes.items():
                setattr(record, name, value)
        return moved == 1


def run(model: type[peewee.Model], row_id: Any, wallet: TradingWallet,
        transport: Transport) -> str:
    """Drive one row through the lifecycle; returns its status (an open one means: run
    again later)."""
    row = _Row(model, row_id)
    record = row.fresh()
    if record.status not in RUNNABLE:
        return str(record.status)
    if record.status in (QUEUED, SIGNED):
        try:
            transport.prepare(record)
        except Refused as exc:
            row.move(record, (QUEUED, SIGNED), transport.unsent, status=FAILED,
                     error=exc.message)
            return str(record.status)
        except Pending as exc:
            row.move(record, (record.status,), error=str(exc))
            _raise_after(exc)
            return str(record.status)
    with contextlib.ExitStack() as held:
        try:
            owner = held.enter_context(wallet_transactions.nonce_lease(wallet))
        except errors.Conflict:
            return str(row.fresh().status)  # another run holds the wallet: it goes on
        status = _send(row, transport, owner)
        if status == BROADCAST and transport.follows_under_lease:
            return _follow(row, transport, owner)
    return _follow(row, transport, None) if status == BROADCAST else status


def _raise_after(exc: Pending) -> None:
    if exc.raise_after is not None:
        raise exc.raise_after


def _send(row: _Row, transport: Transport, owner: str) -> str:
    record = row.fresh()  # again, under the lease: what an earlier run left is the truth
    if (record.status == QUEUED and transport.takes_row_before_signing
            and not row.move(record, (QUEUED,), status=SIGNED)):
        return str(row.fresh().status)
    if record.status not in (QUEUED, SIGNED, AMBIGUOUS):
        return str(record.status)
    # a queued row the transport takes itself becomes signed with its stored bytes
    here = (QUEUED, SIGNED) if record.status == QUEUED else (record.status,)
    try:
        transport.send(record, owner)
    except Refused as exc:
        row.move(record, here, transport.unsent, status=FAILED, error=exc.message)
    except Executed as exc:
        row.move(record, here, status=CONFIRMED, error=str(exc))
    except Ambiguous as exc:
        row.move(record, here, status=AMBIGUOUS, error=str(exc))
    except Pending as exc:
        row.move(record, here, error=str(exc))
        _raise_after(exc)
    else:
        row.move(record, here, status=BROADCAST, error=None)
    return str(row.fresh().status)  # another run may have moved it further meanwhile


def _follow(row: _Row, transport: Transport, owner: str | None) -> str:
    record = row.fresh()
    if record.status != BROADCAST:
        return str(record.status)
    try:
        transport.follow(record, owner)
    except Failed as exc:
        row.move(record, (BROADCAST,), status=FAILED, error=exc.message)
    except Pending as exc:
        _raise_after(exc)
    else:
        row.move(record, (BROADCAST,), status=CONFIRMED, error=None)
    return str(row.fresh().status)  # another run may have settled it meanwhile


__all__ = ["FOLLOW_POLLS", "RUNNABLE", "Ambiguous", "Executed", "Failed", "Pending", "Refused",
           "Transport", "job_timeout", "run"]
