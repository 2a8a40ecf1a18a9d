"""USDC.e into pUSD: a deposit wallet wraps its USDC.e through the CollateralOnramp as one
relayer ``WALLET`` batch (approve the onramp, ``wrap``), so no POL is needed
(ACCOUNTS.md §6).

Exactly once: the request is a ``CollateralWrap`` row before anything leaves; the job takes
it from ``queued`` to ``submitting`` with a conditional UPDATE (one runner), stores the
relayer's transaction id as soon as it answers, follows it to a final state, then has the
CLOB re-read the wallet. A row found ``submitting`` without an id (a crash in between) is
failed for the user to look at, never resubmitted blindly. One wallet has at most one wrap
in flight (queued, submitting or submitted): a partial unique index (m0072) refuses a twin,
whoever asks (the user, or the deposit watcher's ``auto_wrap``).
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal, InvalidOperation
from typing import Any
from uuid import UUID

import peewee

from chain.tokens import to_base_units
from models.base import db, utcnow
from models.user import User
from models.wallet import (
    CONFIRMED,
    FAILED,
    QUEUED,
    SIGNATURE_TYPE_DEPOSIT_WALLET,
    CollateralWrap,
    TradingWallet,
)
from services.platform import errors, jobs, venues
from services.platform.principal import user_id_of
from services.wallets import trading_accounts, venue_accounts, wallets
from venue.accounts import Approval
from venue.accounts.wallet_calls import wrap_call
from venue.errors import VenueError
from venue.relayer import RelayerTransactionFailed, await_final, wallet_batch
from venue.signing import OrderKey

JOB_NAME = "accounts.wrap"
SUBMITTING, SUBMITTED = "submitting", "submitted"
IN_FLIGHT = (QUEUED, SUBMITTING, SUBMITTED)
USDC_E_DECIMALS = 6
# After a failed wrap the watcher waits this long before wrapping that wallet again, so a
# relayer that keeps refusing is not asked every sweep (a user's retry is not held back).
AUTO_RETRY_AFTER = timedelta(minutes=5)


def _amount(raw: Any) -> Decimal:
    try:
        amount = Decimal(str(raw))
        to_base_units(amount, USDC_E_DECIMALS)
    except (InvalidOperation, ValueError, TypeError):
        raise errors.ValidationFailed(fields={"amount": [
            "Must be a positive amount of USDC.e with at most 6 decimals."]}) from None
    if not amount.is_finite() or amount <= 0:
        raise errors.ValidationFailed(fields={"amount": ["Must be more than 0."]})
    return amount


def request_wrap(user: User | UUID | str, amount: Any) -> CollateralWrap:
    """Record a wrap of ``amount`` USDC.e and queue its job; the row to follow."""
    value = _amount(amount)
    wallet = wallets.for_user(user_id_of(user))
    if wallet is None or wallet.signature_type != SIGNATURE_TYPE_DEPOSIT_WALLET:
        # Not a missing feature (501): the account must first be set up as a deposit wallet.
        raise errors.AccountNotReady("Wrapping goes through a deposit wallet; this account "
                                     "has none (set it up on the account page).")
    trading_accounts.refuse_session_key(wallet, "wrap")
    trading_accounts.require_live(user)
    row = _record(wallet, value)
    if row is None:
        raise errors.Conflict("A wrap of this wallet is already under way; follow it, then "
                              "wrap what is left.")
    return row


def _record(wallet: TradingWallet, amount: Decimal) -> CollateralWrap | None:
    """Store a wrap and queue its job; None when the wallet has one in flight already."""
    try:
        with db.atomic():
            row = CollateralWrap.create(wallet=wallet.id, amount=amount)
    except peewee.IntegrityError:
        return None  # the partial unique index: one wrap in flight per wallet
    enqueue(row)
    return row


def enqueue(row: CollateralWrap) -> None:
    """Queue the wrap's job (once while one is pending; maintenance re-queues a lost one)."""
    jobs.enqueue(JOB_NAME, row.id, job_id=jobs.logical_job_id(JOB_NAME, row.id))


def auto_wrap(wallet: TradingWallet, amount: Decimal) -> CollateralWrap | None:
    """The deposit watcher's wrap of ``amount`` USDC.e found at a deposit wallet: recorded and
    queued unless one is in flight, or the last one failed under AUTO_RETRY_AFTER ago."""
    if wallet.signature_type != SIGNATURE_TYPE_DEPOSIT_WALLET or wallet.session_signer:
        return None  # a session key trades only: its owner wraps (refuse_session_key)
    last = latest(wallet)
    if last is not None and (last.status in IN_FLIGHT or (
            last.status == FAILED and utcnow() - last.updated_at < AUTO_RETRY_AFTER)):
        return None
    return _record(wallet, amount)


def latest(wallet: TradingWallet) -> CollateralWrap | None:
    """The wallet's most recent wrap, if any."""
    return (CollateralWrap.select().where(CollateralWrap.wallet == wallet.id)
            .order_by(CollateralWrap.created_at.desc()).first())


def offer(user: User | UUID | str) -> dict[str, Any]:
    """USDC.e waiting at the user's deposit wallet (read on chain) and its latest wrap: what
    the account page offers to wrap. ``usdc_e`` is None where it cannot be read."""
    wallet = wallets.for_user(user_id_of(user))
    if (wallet is None or wallet.signature_type != SIGNATURE_TYPE_DEPOSIT_WALLET
            or wallet.session_signer):  # a session key cannot wrap (refuse_session_key)
        return {"available": False, "usdc_e": None, "wrap": None}
    last = latest(wallet)
    try:
        usdce: Decimal | None = wallets.balance_of(wallet, "usdc_e")
    except Exception as exc:  # no chain configured, or the RPC is down: nothing to offer
        if errors.from_external(exc) is None:
            raise
        usdce = None
    return {"available": True, "usdc_e": usdce,
            "wrap": describe(last) if last is not None else None}


def get(user: User | UUID | str, wrap_id: UUID | str) -> CollateralWrap:
    """One of the user's wraps; NotFound otherwise."""
    row = (CollateralWrap.select().join(TradingWallet)
           .where((CollateralWrap.id == wrap_id)
                  & (TradingWallet.user == user_id_of(user))).first())
    if row is None:
        raise errors.NotFound("No such wrap.")
    return row


def describe(row: CollateralWrap) -> dict[str, Any]:
    """The wrap as surfaces show it."""
    return {"id": row.id, "amount": row.amount, "status": row.status,
            "transaction_id": row.transaction_id, "error": row.error,
            "created_at": row.created_at}


def _move(row: CollateralWrap, expected: str, **changes: Any) -> bool:
    changes["updated_at"] = utcnow()
    moved = (CollateralWrap.update(**changes)
             .where((CollateralWrap.id == row.id) & (CollateralWrap.status == expected))
             .execute())
    if moved:
        for name, value in changes.items():
            setattr(row, name, value)
    return moved == 1


def run(wrap_id: UUID | str) -> str:
    """The job: submit once, follow to a final state, refresh the CLOB; the final status."""
    row = CollateralWrap.get_by_id(wrap_id)
    wallet = TradingWallet.get_by_id(row.wallet_id)
    client = venues.client()
    auth = trading_accounts.relayer_auth(wallet)
    if row.status == QUEUED:
        if auth is None:
            _move(row, QUEUED, status=FAILED, error="Builder credentials not configured.")
            return row.status
        if not _move(row, QUEUED, status=SUBMITTING, submitted_at=utcnow()):
            return CollateralWrap.get_by_id(wrap_id).status  # another run has it
        contracts = trading_accounts.contracts()
        maker = wallets.maker(wallet)
        base = to_base_units(row.amount, USDC_E_DECIMALS)
        calls = [Approval(contracts.usdc_e, "approve", contracts.collateral_onramp).call(),
                 wrap_call(maker, base, contracts)]
        try:
            sent = client.run_steps(wallet_batch(
                auth, OrderKey(wallets.signer(wallet)), chain_id=contracts.chain_id,
                factory=contracts.deposit_wallet_factory, wallet=maker, calls=calls,
                metadata="copytrade wrap USDC.e"))
        except VenueError as exc:
            # Refused (or unanswered): with no id the outcome is unknown, so it stays for a
            # person to look at rather than being sent again.
            _move(row, SUBMITTING, status=FAILED, error=f"The relayer refused: {exc}")
            return row.status
        _move(row, SUBMITTING, status=SUBMITTED, transaction_id=sent.transaction_id)
    if row.status == SUBMITTING:
        _move(row, SUBMITTING, status=FAILED, error="Interrupted between submitting and "
              "recording; check the wallet's balances before wrapping again.")
        return row.status
    if row.status != SUBMITTED:
        return row.status
    try:
        client.run_steps(await_final(row.transaction_id, auth))
    except RelayerTransactionFailed as exc:
        _move(row, SUBMITTED, status=FAILED, error=str(exc))
        return row.status
    _move(row, SUBMITTED, status=CONFIRMED)
    venue_accounts.refresh_balance(venue_accounts.account(wallet.user_id))
    return row.status


__all__ = ["IN_FLIGHT", "JOB_NAME", "auto_wrap", "describe", "enqueue", "get", "latest", "offer",
           "request_wrap", "run"]
