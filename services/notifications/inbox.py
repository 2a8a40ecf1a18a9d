"""The in-app notification centre: the user's events, newest first, unread counts, marking
read, and a Redis channel per user that live listeners (MCP ``subscriptions/listen``) follow."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any
from uuid import UUID

from models.base import utcnow
from models.notifications import Notification
from models.user import User
from services.notifications import catalogue
from services.platform import jobs
from services.platform.pagination import DEFAULT_LIMIT, Page, paginate

log = logging.getLogger(__name__)


def as_dict(notification: Notification) -> dict[str, Any]:
    """A notification as every machine surface shows it: third-party text in the envelope."""
    payload = json.loads(notification.payload or "{}")
    link = payload.pop("link", None)
    return {"id": notification.id, "type": notification.type, "title": notification.title,
            "text": notification.text, "link": link,
            "data": catalogue.envelope(notification.type, payload),
            "created_at": notification.created_at, "read_at": notification.read_at}


def _shown(user: User | UUID) -> Any:
    return Notification.select().where(Notification.user == user,
                                       Notification.in_app == True)  # noqa: E712


def list_notifications(user: User | UUID, *, unread: bool = False, limit: int = DEFAULT_LIMIT,
                       offset: int = 0) -> Page[dict[str, Any]]:
    """One page of the user's notifications, newest first (``unread``: unread only)."""
    query = _shown(user)
    if unread:
        query = query.where(Notification.read_at.is_null())
    query = query.order_by(Notification.created_at.desc(), Notification.id.desc())
    return paginate(query, limit, offset).map(as_dict)


def unread_count(user: User | UUID) -> int:
    """How many of the user's notifications are unread."""
    return _shown(user).where(Notification.read_at.is_null()).count()


def mark_read(user: User | UUID, ids: Iterable[UUID] | None = None) -> dict[str, int]:
    """Mark the given notifications (all of them without ``ids``) read; how many changed."""
    query = Notification.update(read_at=utcnow()).where(Notification.user == user,
                                                        Notification.read_at.is_null())
    if ids is not None:
        query = query.where(Notification.id.in_(list(ids)))
    changed = query.execute()
    return {"marked": changed, "unread": unread_count(user)}


def topic(user_id: UUID | str) -> str:
    """The Redis pub/sub channel of one user's new notifications."""
    return f"{jobs.current_config().prefix}notifications:{user_id}"


def publish(notification: Notification) -> None:
    """Tell live listeners about a new notification (best effort: the list has it anyway)."""
    if not notification.in_app:
        return
    try:
        jobs.connection().publish(topic(notification.user_id), str(notification.id))
    except Exception:  # a Redis blip costs a live push, never the event
        log.warning("notification %s was not pushed to live listeners", notification.id,
                    exc_info=True)
