"""Periodic upkeep: nothing is left half-done after a crash or a lost job.

Every worker runs the scheduler; each tick enqueues idempotent jobs under fixed
job ids, so several workers ticking together still queue each job once, and a
job already queued or running is not queued again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import trio

from models.base import utcnow
from models.wallet import OPEN_STATES, Claim, CollateralWrap, TradingWallet, Withdrawal
from services.copying import screening
from services.identity import retention
from services.platform import idempotency, jobs
from services.platform.runtime import runtime
from services.trading import order_reconcile, previews, resolved_positions
from services.wallets import claims, collateral, deposits, withdrawals
from worker.jobs import job, on_worker_start

log = logging.getLogger(__name__)

RESUME_JOB = "maintenance.resume_chain_work"
PURGE_JOB = "maintenance.purge"
CLOSE_RESOLVED_JOB = "maintenance.close_resolved_positions"
CHAIN_WORK_GRACE = timedelta(seconds=60)  # a job younger than this is still being worked


def _signing_now(model: type[Withdrawal] | type[Claim] | type[CollateralWrap]) -> Any:
    """Rows whose wallet's lease is held: a run of their job is still going (on chain while
    it signs; through the relayer from the signature until the batch is final)."""
    busy = (TradingWallet.select(TradingWallet.id)
            .where(TradingWallet.nonce_lease_until > utcnow()))
    return model.wallet.in_(busy)


@job(RESUME_JOB)
def resume_chain_work(older_than_seconds: int = 60) -> int:
    """Re-queue withdrawals, claims and wraps whose job was lost; their jobs never send twice.

    Rows whose wallet's lease is held are left alone: a run that is still going (re-queued
    at shutdown while its thread went on) would otherwise meet a second one. The second
    would be harmless (it re-reads under the lease), but avoidable. The jobs' time limits
    cover their follow loops (wallet_lifecycle.job_timeout), so none is abandoned
    mid-run by a timeout.
    """
    cutoff = utcnow() - timedelta(seconds=older_than_seconds)
    count = 0
    for withdrawal in Withdrawal.select().where(Withdrawal.status.in_(OPEN_STATES),
                                                Withdrawal.created_at <= cutoff,
                                                ~_signing_now(Withdrawal)):
        withdrawals.enqueue(withdrawal)
        count += 1
    for claim in Claim.select().where(Claim.status.in_(OPEN_STATES), Claim.created_at <= cutoff,
                                      ~_signing_now(Claim)):
        claims.enqueue(claim)
        count += 1
    # A wrap in flight blocks its wallet's next one (one in flight per wallet), so a lost
    # job must come back; a run still going keeps its job id and is not queued twice.
    for wrap in CollateralWrap.select().where(CollateralWrap.status.in_(collateral.IN_FLIGHT),
                                              CollateralWrap.created_at <= cutoff,
                                              ~_signing_now(CollateralWrap)):
        collateral.enqueue(wrap)
        count += 1
    return count


@job(PURGE_JOB)
def purge() -> dict[str, int]:
    """Drop expired order previews, idempotency records and spent sign-in and OAuth rows."""
    sign_in = runtime().settings.sign_in
    return {"previews": previews.purge_expired(), "idempotency": idempotency.purge_expired(),
            **retention.purge(timedelta(days=sign_in.retention_days),
                              timedelta(seconds=sign_in.window_seconds))}


@job(CLOSE_RESOLVED_JOB)
def close_resolved_positions() -> int:
    """Close the copy positions of markets that resolved at their payout; how many."""
    return len(resolved_positions.close_resolved_markets())


def schedule_once() -> None:
    """Enqueue one round of upkeep (deduplicated by job id)."""
    grace = int(CHAIN_WORK_GRACE.total_seconds())
    for name, args, queue in ((order_reconcile.RECONCILE_PENDING_JOB, (30,), "low"),
                              (RESUME_JOB, (grace,), "low"),
                              (PURGE_JOB, (), "low"),
                              (CLOSE_RESOLVED_JOB, (), "low")):
        jobs.enqueue(name, *args, job_id=jobs.logical_job_id(name), queue=queue)


async def repeat(what: str, interval: float, tick: Callable[[], object]) -> None:
    """Run blocking ``tick`` in a thread every ``interval`` seconds until cancelled."""
    while True:
        try:
            await trio.to_thread.run_sync(tick)
        except Exception:  # Redis blips must not end the scheduler
            log.warning("%s tick failed", what, exc_info=True)
        await trio.sleep(interval)


@on_worker_start("maintenance")
async def run_scheduler(host: Any) -> None:
    """Tick every COPYTRADE_MAINTENANCE_SECONDS until the worker stops."""
    await repeat("maintenance", runtime().settings.worker.maintenance_seconds, schedule_once)


def _once_per(tick: str, seconds: float, enqueue: Callable[[], object]) -> bool:
    """Run ``enqueue`` unless it ran less than ``seconds`` ago in any worker (a Redis key
    ``tick`` with that lifetime); whether this call ran it."""
    if seconds <= 0:
        return False
    if not jobs.connection().set(f"{jobs.current_config().prefix}{tick}", "1", nx=True,
                                 px=max(1, int(seconds * 1000))):
        return False  # another worker (or this one) queued it within the interval
    enqueue()
    return True


def schedule_deposit_sweep() -> bool:
    """Queue the deposit sweep unless one was queued less than DEPOSIT_SWEEP_SECONDS ago
    by any worker; whether this call queued it."""
    return _once_per("deposit-sweep-tick", runtime().settings.deposits.sweep_seconds,
                     deposits.enqueue_sweep)


def schedule_claim_sweep() -> bool:
    """Queue the claim sweep (claim.available) unless one was queued less than
    CLAIM_SWEEP_SECONDS ago by any worker; whether this call queued it."""
    return _once_per("claim-sweep-tick", runtime().settings.deposits.claim_sweep_seconds,
                     claims.enqueue_sweep)


async def _sweeping(what: str, seconds: float, schedule: Callable[[], bool]) -> None:
    if seconds <= 0:
        return  # turned off
    while True:
        try:
            await trio.to_thread.run_sync(schedule)
        except Exception:  # Redis blips must not end the scheduler
            log.warning("%s tick failed", what, exc_info=True)
        await trio.sleep(min(seconds, 5.0))


@on_worker_start("deposit-sweep")
async def run_deposit_sweeps(host: Any) -> None:
    """Queue a deposit sweep every DEPOSIT_SWEEP_SECONDS, once across all workers."""
    await _sweeping("deposit sweep", runtime().settings.deposits.sweep_seconds,
                    schedule_deposit_sweep)


@on_worker_start("claim-sweep")
async def run_claim_sweeps(host: Any) -> None:
    """Queue a claim sweep every CLAIM_SWEEP_SECONDS, once across all workers."""
    await _sweeping("claim sweep", runtime().settings.deposits.claim_sweep_seconds,
                    schedule_claim_sweep)


def schedule_screening() -> bool:
    """Queue a screening sweep unless one was queued less than SCREENING_INTERVAL_SECONDS
    ago by any worker; whether this call queued it."""
    return _once_per("screening-tick", runtime().settings.screening.interval_seconds,
                     screening.enqueue_sweep)


@on_worker_start("screening")
async def run_screening(host: Any) -> None:
    """Queue a screening sweep every SCREENING_INTERVAL_SECONDS, once across all workers
    (the first as the worker starts)."""
    await _sweeping("screening", runtime().settings.screening.interval_seconds,
                    schedule_screening)
