"""Sending deliveries: claim, send, record the answer, retry with backoff, digest bursts.

A delivery row exists before anything is sent. The job claims it (pending and due ->
sending, with a lease), sends, then records: sent; or pending again after the next wait of
NOTIFY_RETRY_SECONDS (30 s, 2 min, 10 min, 1 h); or failed once those are spent. A
receiver answering 410 Gone turns its channel off and the user is told in the app. The
tick (every NOTIFY_TICK_SECONDS, any worker) queues due retries, takes back claims whose
worker died, and sends held bursts as digests. Sending is at least once: a receiver that
sees a ``webhook-id`` twice (a worker dying between send and record) drops the repeat.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from datetime import timedelta
from typing import Any
from uuid import UUID

from models.base import atomic, utcnow
from models.notifications import (
    CANCELLED,
    DIGESTED,
    FAILED,
    HELD,
    PENDING,
    SENDING,
    SENT,
    NotificationChannel,
    NotificationDelivery,
)
from services.notifications import catalogue, dispatch, events, providers, transports
from services.platform.pagination import DEFAULT_LIMIT, Page, paginate
from services.platform.runtime import runtime

log = logging.getLogger(__name__)

DUE_PER_TICK = 500


def _config() -> Any:
    return runtime().settings.notifications


def message_for(delivery: NotificationDelivery) -> transports.Message:
    """The message a delivery sends: its event's, or its digest's."""
    channel = delivery.channel
    unsubscribe = providers.get(channel.kind).unsubscribe_url(channel)
    if delivery.notification_id is None:
        return transports.Message(
            id=str(delivery.id), type="digest", title="Notifications digest",
            text=delivery.digest_text or "", created_at=delivery.created_at,
            link=runtime().settings.base_url + "/dashboard/notifications",
            unsubscribe_url=unsubscribe)
    event = delivery.notification
    payload = json.loads(event.payload or "{}")
    link = payload.pop("link", None)
    return transports.Message(
        id=str(event.id), type=event.type, title=event.title, text=event.text,
        created_at=event.created_at, link=link,
        data={"event_id": event.key, "payload": catalogue.envelope(event.type, payload)},
        unsubscribe_url=unsubscribe)


def _claim(delivery_id: UUID | str) -> bool:
    now = utcnow()
    lease = timedelta(seconds=_config().send_deadline_seconds * 3 + 30)
    return NotificationDelivery.update(
        status=SENDING, lease_until=now + lease, attempts=NotificationDelivery.attempts + 1,
    ).where(NotificationDelivery.id == delivery_id, NotificationDelivery.status == PENDING,
            NotificationDelivery.next_attempt_at <= now).execute() == 1


def deliver(delivery_id: UUID | str) -> str:
    """Send one delivery if it is due (the job ``notifications.deliver``); its status."""
    if not _claim(delivery_id):
        found = NotificationDelivery.get_or_none(NotificationDelivery.id == delivery_id)
        return found.status if found else "missing"
    delivery = NotificationDelivery.get_by_id(delivery_id)
    channel = delivery.channel
    if not channel.enabled:
        _finish(delivery, status=CANCELLED, error="the channel is off")
        return CANCELLED
    try:
        outcome = providers.send(channel, message_for(delivery))
    except Exception as exc:  # a bug or a sealed secret that no longer opens: retry, log
        log.exception("delivery %s failed to send", delivery_id)
        outcome = transports.Outcome(False, error=f"internal error: {type(exc).__name__}")
    return record(delivery, outcome)


def record(delivery: NotificationDelivery, outcome: transports.Outcome) -> str:
    """Store one attempt's outcome; schedule the retry or give up; its new status."""
    if outcome.ok:
        _finish(delivery, status=SENT, outcome=outcome, sent_at=utcnow())
        return SENT
    if outcome.gone:
        _finish(delivery, status=FAILED, outcome=outcome)
        disable(delivery.channel, f"the receiver answered {outcome.status_code} (gone)")
        return FAILED
    waits = _config().retry_seconds
    if outcome.permanent or delivery.attempts > len(waits):
        _finish(delivery, status=FAILED, outcome=outcome)
        return FAILED
    wait = waits[delivery.attempts - 1]
    _finish(delivery, status=PENDING, outcome=outcome,
            next_attempt_at=utcnow() + timedelta(seconds=wait))
    return PENDING


def _finish(delivery: NotificationDelivery, *, status: str,
            outcome: transports.Outcome | None = None, error: str | None = None,
            **extra: Any) -> None:
    values: dict[str, Any] = {"status": status, "lease_until": None, **extra}
    if outcome is not None:
        values.update(last_status_code=outcome.status_code, last_latency_ms=outcome.latency_ms,
                      last_error=(outcome.error or None) and outcome.error[:300])
    if error:
        values["last_error"] = error
    NotificationDelivery.update(**values).where(
        NotificationDelivery.id == delivery.id).execute()


def disable(channel: NotificationChannel, reason: str) -> None:
    """Turn ``channel`` off, cancel what it still had to send, and tell the user in the app."""
    with atomic():
        changed = NotificationChannel.update(enabled=False, disabled_reason=reason[:200]).where(
            NotificationChannel.id == channel.id,
            NotificationChannel.enabled == True).execute()  # noqa: E712
        NotificationDelivery.update(status=CANCELLED, last_error="the channel was turned off"
                                    ).where(NotificationDelivery.channel == channel,
                                            NotificationDelivery.status.in_((PENDING, HELD))
                                            ).execute()
    if changed:
        events.emit(channel.user_id, "channel.disabled", f"channel.disabled:{channel.id}",
                    link="/dashboard/notifications", kind=channel.kind,
                    label=channel.label or channel.kind, reason=reason)


def tick() -> dict[str, int]:
    """One round: take back dead claims, digest held bursts, queue due deliveries."""
    now = utcnow()
    reclaimed = NotificationDelivery.update(status=PENDING, lease_until=None).where(
        NotificationDelivery.status == SENDING, NotificationDelivery.lease_until < now).execute()
    digests = make_digests()
    due = [row.id for row in NotificationDelivery.select(NotificationDelivery.id).where(
        NotificationDelivery.status == PENDING, NotificationDelivery.next_attempt_at <= now)
        .order_by(NotificationDelivery.next_attempt_at).limit(DUE_PER_TICK)]
    for delivery_id in due:
        dispatch.enqueue(delivery_id)
    return {"reclaimed": reclaimed, "digests": digests, "queued": len(due)}


def digest_text(types: Counter[str]) -> str:
    """One line for a burst: how many of each event type, most first."""
    parts = [f"{count} × {catalogue.event_type(name).title}"  # noqa: RUF001 - a times sign
             for name, count in types.most_common()]
    total = sum(types.values())
    return (f"{total} notifications arrived in a burst: {', '.join(parts)}. "
            "See them all in the app.")


def make_digests() -> int:
    """Fold each channel's held deliveries into one digest once its window has passed."""
    window = timedelta(seconds=_config().burst_window_seconds)
    cutoff = utcnow() - window
    channels = {row.channel_id for row in NotificationDelivery.select(
        NotificationDelivery.channel).where(NotificationDelivery.status == HELD,
                                            NotificationDelivery.created_at <= cutoff)}
    made = 0
    for channel_id in channels:
        with atomic():
            held = list(NotificationDelivery.select(NotificationDelivery, ).where(
                NotificationDelivery.channel == channel_id,
                NotificationDelivery.status == HELD))
            if not held:
                continue
            types = Counter(row.notification.type for row in held if row.notification_id)
            digest = NotificationDelivery.create(channel=channel_id,
                                                 digest_text=digest_text(types))
            NotificationDelivery.update(status=DIGESTED, digest=digest).where(
                NotificationDelivery.id.in_([row.id for row in held]),
                NotificationDelivery.status == HELD).execute()
        made += 1
    return made


def log_page(channel: NotificationChannel, limit: int = DEFAULT_LIMIT,
             offset: int = 0) -> Page[dict[str, Any]]:
    """The channel's delivery log, newest first: status, attempts, last answer and latency."""
    query = (NotificationDelivery.select().where(NotificationDelivery.channel == channel)
             .order_by(NotificationDelivery.created_at.desc(), NotificationDelivery.id.desc()))
    return paginate(query, limit, offset).map(lambda row: {
        "id": row.id, "event_type": row.notification.type if row.notification_id else "digest",
        "notification_id": row.notification_id, "status": row.status,
        "attempts": row.attempts, "status_code": row.last_status_code,
        "latency_ms": row.last_latency_ms, "error": row.last_error,
        "created_at": row.created_at, "next_attempt_at": row.next_attempt_at
        if row.status == PENDING else None, "sent_at": row.sent_at})
