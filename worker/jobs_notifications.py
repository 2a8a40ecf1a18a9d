"""Notification jobs: send one delivery; and the tick every worker runs (due retries, dead
claims, digests), queued once per interval across workers by a fixed job id."""

from __future__ import annotations

from typing import Any

from services.notifications import deliveries, dispatch
from services.platform import jobs
from services.platform.runtime import runtime
from worker.jobs import job, on_worker_start
from worker.maintenance import repeat


@job(dispatch.JOB_NAME)
def deliver(delivery_id: str) -> str:
    """Send one delivery if it is due; its status afterwards."""
    return deliveries.deliver(delivery_id)


@job(dispatch.TICK_JOB)
def tick() -> dict[str, int]:
    """Take back dead claims, send held bursts as digests, queue due deliveries."""
    return deliveries.tick()


def schedule_tick() -> None:
    """Queue the tick (a pending one is not queued twice)."""
    jobs.enqueue(dispatch.TICK_JOB, job_id=jobs.logical_job_id(dispatch.TICK_JOB))


@on_worker_start("notifications")
async def run_ticks(host: Any) -> None:
    """Queue the notifications tick every NOTIFY_TICK_SECONDS until the worker stops."""
    await repeat("notifications", runtime().settings.notifications.tick_seconds, schedule_tick)
