"""Notification jobs: send one delivery; and the tick every worker runs (due retries, dead
claims, digests), queued once per interval across workers by a fixed job id."""

from __future__ import annotations

import logging
from typing import Any

import trio

from services.copying import copy_notices
from services.identity import telegram_bot
from services.notifications import deliveries, dispatch, telegram
from services.platform import jobs
from services.platform.runtime import runtime
from worker.jobs import job, on_worker_start
from worker.maintenance import repeat

log = logging.getLogger(__name__)


@job(dispatch.JOB_NAME)
def deliver(delivery_id: str) -> str:
    """Send one delivery if it is due; its status afterwards."""
    return deliveries.deliver(delivery_id)


@job(dispatch.TICK_JOB)
def tick() -> dict[str, int]:
    """Take back dead claims, send held bursts as digests, queue due deliveries."""
    return deliveries.tick()


@job(copy_notices.JOB_NAME)
def notify_copies(*intent_ids: str) -> int:
    """Tell followers about settled copies (filled, skipped, out of funds); how many."""
    return copy_notices.emit_outcomes(intent_ids)


def schedule_tick() -> None:
    """Queue the tick (a pending one is not queued twice)."""
    jobs.enqueue(dispatch.TICK_JOB, job_id=jobs.logical_job_id(dispatch.TICK_JOB))


@on_worker_start("notifications")
async def run_ticks(host: Any) -> None:
    """Queue the notifications tick every NOTIFY_TICK_SECONDS until the worker stops."""
    await repeat("notifications", runtime().settings.notifications.tick_seconds, schedule_tick)


def _poller_key() -> str:
    return f"{jobs.current_config().prefix}telegram-poller"


def poll_telegram(owner: str) -> bool:
    """One long poll, when this worker holds the poller lease (Telegram allows one poller);
    the offset is kept in Redis so a new poller goes on where the last stopped."""
    client = jobs.connection()
    timeout = runtime().settings.notifications.telegram_poll_seconds
    lease_ms = int((timeout + 30) * 1000)
    key = _poller_key()
    if not client.set(key, owner, nx=True, px=lease_ms):
        if (client.get(key) or b"").decode() != owner:
            return False
        client.pexpire(key, lease_ms)
    saved = client.get(key + ":offset")
    offset = telegram_bot.poll_once(int(saved) if saved else None, timeout)
    if offset is not None:
        client.set(key + ":offset", offset)
    return True


@on_worker_start("telegram")
async def run_telegram(host: Any) -> None:
    """Long-poll the Telegram bot (BASE_URL not https), or register its webhook (https)."""
    if not await trio.to_thread.run_sync(telegram.configured):
        return
    if await trio.to_thread.run_sync(telegram.uses_webhook):
        await repeat("telegram webhook", 3600, telegram.set_webhook)
        return
    owner = getattr(host, "name", "worker")
    while True:
        try:
            if not await trio.to_thread.run_sync(poll_telegram, owner):
                await trio.sleep(5)  # another worker polls
        except Exception:  # Telegram or Redis down: try again shortly
            log.warning("telegram poll failed", exc_info=True)
            await trio.sleep(5)
