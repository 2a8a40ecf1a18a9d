"""USDC.e into pUSD: a deposit wallet wraps its USDC.e through the CollateralOnramp as one
relayer ``WALLET`` batch (approve the onramp, ``wrap``), so no POL is needed
(ACCOUNTS.md §6).

Exactly once: the request is a ``CollateralWrap`` row before anything leaves; the job runs
it through the one wallet lifecycle (services/wallets/wallet_batches.py: the wallet's lease,
signed once, the bytes stored before they leave, resent never re-signed, followed to a final
state; a second run follows the first run's batch), then has the CLOB re-read the wallet.
One wallet has at most one wrap open (queued, signed, broadcast or ambiguous): a partial
unique index (m0072, m0078) refuses a twin, whoever asks (the user, or the deposit
watcher's ``auto_wrap``).
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
    OPEN_STATES,
    QUEUED,
    SIGNATURE_TYPE_DEPOSIT_WALLET,
    CollateralWrap,
    TradingWallet,
)
from services.platform import errors, jobs
from services.platform.principal import user_id_of
from services.wallets import (
    trading_accounts,
    venue_accounts,
    wallet_batches,
    wallet_lifecycle,
    wallets,
)
from venue.accounts import Approval
from venue.accounts.batch import Call
from venue.accounts.wallet_calls import wrap_call

JOB_NAME = "accounts.wrap"
IN_FLIGHT = OPEN_STATES
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
    jobs.enqueue(JOB_NAME, row.id, job_id=jobs.logical_job_id(JOB_NAME, row.id),
                 timeout=wallet_lifecycle.job_timeout())


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
            "transaction_id": row.transaction_id, "tx_hash": row.transaction_hash,
            "error": row.error, "created_at": row.created_at}


def run(wrap_id: UUID | str, max_polls: int | None = None) -> str:
    """The job: the wrap's batch through the wallet lifecycle (signed once, stored before
    it leaves, followed to a final state), then the CLOB re-reads the wallet; the status
    (an open one means: run again later)."""
    row = CollateralWrap.get_by_id(wrap_id)
    wallet = TradingWallet.get_by_id(row.wallet_id)
    if row.status == QUEUED and trading_accounts.relayer_auth(wallet) is None:
        CollateralWrap.update(status=FAILED, error="Builder credentials not configured.",
                              updated_at=utcnow()).where(
            (CollateralWrap.id == row.id) & (CollateralWrap.status == QUEUED)).execute()
        return FAILED
    if row.status == QUEUED:
        CollateralWrap.update(submitted_at=utcnow()).where(
            CollateralWrap.id == row.id).execute()

    def calls(record: CollateralWrap) -> list[Call]:
        contracts = trading_accounts.contracts()
        base = to_base_units(record.amount, USDC_E_DECIMALS)
        return [Approval(contracts.usdc_e, "approve", contracts.collateral_onramp).call(),
                wrap_call(wallets.maker(wallet), base, contracts)]

    status = wallet_batches.run(wallet_batches.BatchRow(CollateralWrap, row.id, ""), wallet,
                                calls, "copytrade wrap USDC.e", "wrap", max_polls)
    if status == CONFIRMED:
        venue_accounts.refresh_balance(venue_accounts.account(wallet.user_id))
    return status


__all__ = ["IN_FLIGHT", "JOB_NAME", "auto_wrap", "describe", "enqueue", "get", "latest", "offer",
           "request_wrap", "run"]
