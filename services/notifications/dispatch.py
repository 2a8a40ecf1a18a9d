"""Queueing deliveries: one RQ job per delivery (deduplicated by job id), and flood control.

Flood control: a channel that was sent NOTIFY_BURST messages within
NOTIFY_BURST_WINDOW_SECONDS holds the next ones; at the window's end they go out as one
digest (deliveries.make_digests). A breaker flapping becomes one message, not a storm.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta

from models.base import utcnow
from models.notifications import NotificationChannel, NotificationDelivery
from services.platform import jobs
from services.platform.runtime import runtime

log = logging.getLogger(__name__)

JOB_NAME = "notifications.deliver"
TICK_JOB = "notifications.tick"


def enqueue(delivery_id: object) -> None:
    """Queue the job that sends one delivery (once: a pending copy is not queued again)."""
    jobs.enqueue(JOB_NAME, str(delivery_id), job_id=jobs.logical_job_id(JOB_NAME, delivery_id))


def enqueue_all(queued: Iterable[NotificationDelivery]) -> None:
    """Queue each delivery's job; Redis down loses nothing (the tick queues them later)."""
    for delivery in queued:
        try:
            enqueue(delivery.id)
        except Exception:
            log.warning("delivery %s not queued now; the next tick will", delivery.id,
                        exc_info=True)


def in_burst(channel: NotificationChannel) -> bool:
    """Whether ``channel`` already had its burst of messages in the current window."""
    config = runtime().settings.notifications
    since = utcnow() - timedelta(seconds=config.burst_window_seconds)
    recent = NotificationDelivery.select().where(
        NotificationDelivery.channel == channel, NotificationDelivery.created_at >= since,
        NotificationDelivery.digest_text.is_null()).count()
    return recent >= config.burst
