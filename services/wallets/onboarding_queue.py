"""Queueing a trading account's onboarding job (``accounts.onboard``), apart from the job's
body (``services.wallets.onboarding``), so that ``services.wallets.wallets`` can queue it
for every new deposit wallet without importing the onboarding steps (which import wallets)."""

from __future__ import annotations

import logging

import peewee
import redis

from models.base import atomic
from models.wallet import ONBOARDING_PENDING, ONBOARDING_READY, AccountOnboarding, TradingWallet
from services.platform import chain_access, jobs

log = logging.getLogger(__name__)

JOB_NAME = "accounts.onboard"
LEASE_SECONDS = 600


def record(wallet: TradingWallet) -> AccountOnboarding:
    """The wallet's onboarding row, created pending the first time."""
    try:
        # reads then writes: IMMEDIATE on SQLite, or a concurrent writer makes it "locked"
        with atomic():
            row, _created = AccountOnboarding.get_or_create(wallet=wallet.id)
            return row
    except peewee.IntegrityError:
        return AccountOnboarding.get(AccountOnboarding.wallet == wallet.id)


def enqueue(wallet: TradingWallet) -> AccountOnboarding:
    """Queue the wallet's onboarding job unless it is ready; a pending copy is not queued
    twice (the job id is the onboarding row's). Its onboarding row."""
    row = record(wallet)
    if row.status != ONBOARDING_READY:
        jobs.enqueue(JOB_NAME, row.id, job_id=jobs.logical_job_id(JOB_NAME, row.id),
                     timeout=LEASE_SECONDS)
    return row


def chain_configured() -> bool:
    """Whether this deployment has a chain to set accounts up on (``POLYGON_RPC_URL``)."""
    return bool(chain_access.current().rpc_url)


def queue_if_waiting(wallet: TradingWallet) -> AccountOnboarding | None:
    """Queue the wallet's onboarding if nobody started it yet (no row, or pending) and a
    chain is configured; the row as it stands after. Cheap when it is under way or done.

    A failed onboarding is left for the user to retry (its reason is theirs to read), and
    Redis being down leaves it pending (logged): the caller's request goes on."""
    row = AccountOnboarding.get_or_none(AccountOnboarding.wallet == wallet.id)
    if (row is not None and row.status != ONBOARDING_PENDING) or not chain_configured():
        return row
    try:
        return enqueue(wallet)
    except redis.exceptions.RedisError as exc:
        log.warning("wallet %s: onboarding not queued: %s", wallet.id, exc)
        return row


__all__ = ["JOB_NAME", "LEASE_SECONDS", "chain_configured", "enqueue", "queue_if_waiting", "record"]
