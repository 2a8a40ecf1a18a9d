"""Periodic upkeep: lost chain jobs come back, stale records go, ticks queue each job once."""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import pytest
import redis

from models.base import utcnow
from models.idempotency import IdempotencyRecord
from models.wallet import CONFIRMED, QUEUED, Withdrawal
from services.platform import jobs as jobs_service
from services.platform import runtime
from services.trading import order_reconcile
from services.wallets import wallets
from tests.conftest import RUN_ID, use_queue
from tests.worker.conftest import delete_prefixed_keys
from worker import maintenance


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    value = f"ct-test-{RUN_ID}-m{secrets.token_hex(3)}:"
    previous = use_queue(redis_url, value)
    yield value
    runtime.install(previous)
    delete_prefixed_keys(redis.Redis.from_url(redis_url), value)


def _withdrawal(user, status: str, age: timedelta) -> Withdrawal:
    wallet = wallets.get_or_create(user)
    return Withdrawal.create(user=user, wallet=wallet, token="usdc", to_address="0x" + "ab" * 20,
                             amount=Decimal("1.5"), status=status, created_at=utcnow() - age)


def test_lost_withdrawal_jobs_are_requeued_once(prefix, bound_db, user):
    stale = _withdrawal(user, QUEUED, timedelta(minutes=5))
    _withdrawal(user, QUEUED, timedelta(seconds=1))  # its job may still be running
    _withdrawal(user, CONFIRMED, timedelta(minutes=5))  # done: nothing to resume
    assert maintenance.resume_chain_work(60) == 1
    assert maintenance.resume_chain_work(60) == 1  # asked again: the queued job is reused
    queued = jobs_service.queue("high").job_ids
    assert queued == [jobs_service.qualified_job_id(
        jobs_service.logical_job_id("withdrawals.send", stale.id))]


def test_purge_drops_expired_idempotency_records(prefix, bound_db, user):
    now = utcnow()
    old = IdempotencyRecord.create(user=user, key=uuid.uuid4(), fingerprint="f", status_code=200,
                                   body="{}", locked_until=now, expires_at=now - timedelta(hours=1))
    fresh = IdempotencyRecord.create(user=user, key=uuid.uuid4(), fingerprint="f",
                                     status_code=200, body="{}", locked_until=now,
                                     expires_at=now + timedelta(hours=1))
    result = maintenance.purge()
    assert result["idempotency"] == 1
    assert IdempotencyRecord.get_or_none(id=old.id) is None
    assert IdempotencyRecord.get_or_none(id=fresh.id) is not None


def test_every_worker_ticking_queues_each_job_once(prefix):
    for _ in range(3):  # three workers (or ticks) before any job ran
        maintenance.schedule_once()
    low = jobs_service.queue("low").job_ids
    assert sorted(low) == sorted(jobs_service.qualified_job_id(jobs_service.logical_job_id(name))
                                for name in (
        order_reconcile.RECONCILE_PENDING_JOB, maintenance.RESUME_JOB, maintenance.PURGE_JOB,
        maintenance.CLOSE_RESOLVED_JOB))


def test_a_withdrawal_whose_wallet_is_signing_now_is_not_requeued(prefix, bound_db, user):
    # a job still running (abandoned after its timeout, or re-queued at shutdown while its
    # thread goes on) holds the wallet's signing lease: a second run now would only wait
    from services.wallets import wallet_transactions

    stale = _withdrawal(user, QUEUED, timedelta(minutes=5))
    with wallet_transactions.nonce_lease(stale.wallet):
        assert maintenance.resume_chain_work(60) == 0
    assert jobs_service.queue("high").job_ids == []
    assert maintenance.resume_chain_work(60) == 1  # lease released: resumed


def test_the_deposit_sweep_is_queued_once_per_interval_across_workers(prefix):
    from services.wallets import deposits

    current = runtime.runtime()
    every = replace(current.settings, deposits=replace(current.settings.deposits,
                                                       sweep_seconds=0.3))
    sweep_id = jobs_service.qualified_job_id(jobs_service.logical_job_id(deposits.SWEEP_JOB))
    runtime.install(replace(current, settings=every))
    try:
        # Two workers ticking together: one queues it; the other finds the interval taken.
        assert [maintenance.schedule_deposit_sweep() for _ in range(2)] == [True, False]
        assert jobs_service.queue("low").job_ids == [sweep_id]
        jobs_service.queue("low").empty()
        time.sleep(0.4)  # the interval has passed: the next tick queues the next sweep
        assert maintenance.schedule_deposit_sweep() is True
        assert jobs_service.queue("low").job_ids == [sweep_id]
        off = replace(every, deposits=replace(every.deposits, sweep_seconds=0))
        runtime.install(replace(current, settings=off))
        assert maintenance.schedule_deposit_sweep() is False  # DEPOSIT_SWEEP_SECONDS=0: off
    finally:
        runtime.install(current)


def test_a_wrap_whose_job_was_lost_is_requeued_once(prefix, bound_db, user):
    from models.wallet import CollateralWrap
    from services.wallets import collateral

    wallet = wallets.get_or_create(user)
    lost = CollateralWrap.create(wallet=wallet, amount=Decimal(3),
                                 created_at=utcnow() - timedelta(minutes=5))
    CollateralWrap.create(wallet=wallet, amount=Decimal(1), status=CONFIRMED,
                          created_at=utcnow() - timedelta(minutes=9))  # done: left alone
    assert maintenance.resume_chain_work(60) == 1
    assert maintenance.resume_chain_work(60) == 1  # asked again: the queued job is reused
    from services.wallets import onboarding_queue

    # The wrap's job once, beside the onboarding the new wallet's creation queued.
    assert sorted(jobs_service.queue("default").job_ids) == sorted(
        jobs_service.qualified_job_id(jobs_service.logical_job_id(name, row_id))
        for name, row_id in ((collateral.JOB_NAME, lost.id), (
            onboarding_queue.JOB_NAME, onboarding_queue.record(wallet).id)))


def test_a_requeued_withdrawal_job_has_time_for_its_longest_run(prefix, bound_db, user):
    # a neg-risk claim on chain waits for two receipts (its approval, then its redeem), a
    # relayer run for its submit and follow: a job timed out before that is abandoned and
    # re-queued beside its still-running thread
    from dataclasses import replace as replaced

    from services.platform.chain_access import current
    from services.platform.chain_settings import ChainAccess
    from services.wallets import wallet_lifecycle, wallet_transactions
    from venue.accounts.relayer_rules import POLL_INTERVAL_SECONDS

    previous = runtime.runtime()
    slow = replaced(current(), receipt_timeout_seconds=400.0)
    runtime.install(replaced(previous, chain=ChainAccess(slow)))
    try:
        stale = _withdrawal(user, QUEUED, timedelta(minutes=5))
        assert maintenance.resume_chain_work(60) == 1
        job = jobs_service.fetch(jobs_service.queue("high").job_ids[0])
        assert job.timeout >= wallet_transactions.LEASE_WAIT_SECONDS + 2 * 400
        assert job.args == [str(stale.id)] or str(job.args[0]) == str(stale.id)
    finally:
        runtime.install(previous)
    assert wallet_lifecycle.job_timeout() >= (wallet_transactions.LEASE_WAIT_SECONDS
                                              + wallet_lifecycle.FOLLOW_POLLS
                                              * POLL_INTERVAL_SECONDS)
