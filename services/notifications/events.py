"""``emit``: what happened to a user, recorded once and fanned out to the channels they chose.

An emitter passes an event id of its own (``copy.filled:<intent id>``): the event is stored
under it, so emitting the same thing twice (a job that runs again, a reconcile that finds the
same fill) records and sends nothing more. The event and its deliveries are written in one
savepoint inside the caller's transaction, if any: they exist exactly when what happened
did. Sending happens afterwards, as jobs; a failure here is logged and never breaks the
emitter's own work.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from decimal import Decimal
from typing import Any
from uuid import UUID

import peewee

from models.base import db, utcnow
from models.notifications import (
    HELD,
    PENDING,
    Notification,
    NotificationChannel,
    NotificationDelivery,
)
from models.user import User
from services.notifications import catalogue, dispatch, inbox, preferences
from services.platform.runtime import runtime

log = logging.getLogger(__name__)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value == value.to_integral() else str(value)
    if isinstance(value, UUID):
        return str(value)
    return value


def emit(user: User | UUID | str, event_type: str, event_id: str,
         link: str | None = None, **payload: Any) -> Notification | None:
    """Record event ``event_id`` of ``event_type`` for ``user`` and queue its deliveries.

    ``payload`` holds amounts (Decimal), markets, reasons: never a secret. ``link`` is a
    dashboard path (``/dashboard/configs``). Returns the new event, or None when
    ``event_id`` was already recorded (or recording failed: logged, never raised).
    """
    catalogue.event_type(event_type)  # an unknown type is the emitter's bug: raise
    clean = {key: _jsonable(value) for key, value in payload.items() if value is not None}
    if link:
        clean["link"] = runtime().settings.base_url + link
    try:
        with db.atomic():  # a savepoint: a failure here leaves the caller's work alone
            if Notification.select().where(Notification.key == event_id).exists():
                return None
            notification, queued = _record(user, event_type, event_id, clean)
    except peewee.IntegrityError:
        return None  # recorded meanwhile by someone else
    except Exception:
        log.exception("notification %s (%s) was not recorded", event_id, event_type)
        return None
    dispatch.enqueue_all(queued)
    inbox.publish(notification)
    return notification


def _record(user: User | UUID | str, event_type: str, event_id: str,
            payload: Mapping[str, Any]) -> tuple[Notification, list[NotificationDelivery]]:
    stored = preferences.rules_for(user, event_type)
    title, text = catalogue.render(event_type, payload)
    in_app = (event_type not in catalogue.USER_EVENT_TYPES
              or preferences.effective(stored, event_type, None).admits(payload))
    notification = Notification.create(
        user=user, key=event_id, type=event_type, payload=json.dumps(payload),
        title=title, text=text, in_app=in_app)
    if event_type == "channel.disabled":
        return notification, []  # about a channel: told in the app only
    queued = []
    for channel in NotificationChannel.select().where(NotificationChannel.user == user,
                                                      NotificationChannel.enabled == True):  # noqa: E712
        if not preferences.effective(stored, event_type, channel.id).admits(payload):
            continue
        held = dispatch.in_burst(channel)
        queued.append(NotificationDelivery.create(
            channel=channel, notification=notification, status=HELD if held else PENDING,
            next_attempt_at=utcnow()))
    return notification, [d for d in queued if d.status == PENDING]
