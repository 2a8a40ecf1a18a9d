"""Queueing a trading account's onboarding job (``accounts.onboard``), apart from the job's
body (``services.wallets.onboarding``), so that ``services.wallets.wallets`` can queue it
for every new deposit wallet without importing the onboarding steps (which import wallets)."""

from __future__ import annotations

import peewee

from models.base import atomic
from models.wallet import ONBOARDING_READY, AccountOnboarding, TradingWallet
from services.platform import jobs

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


__all__ = ["JOB_NAME", "LEASE_SECONDS", "enqueue", "record"]
