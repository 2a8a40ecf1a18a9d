"""The in-app notification centre: the user's events, newest first, unread counts, marking
read, and a Redis channel per user that live listeners (MCP ``subscriptions/listen``) follow:
``publish`` pushes each new in-app notification's id there, ``Listener`` follows it."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any
from uuid import UUID

import redis

from models.base import db, utcnow
from models.notifications import Notification
from models.user import User
from services.notifications import catalogue
from services.platform import errors, jobs
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


def get(user: User | UUID, notification_id: UUID | str) -> dict[str, Any]:
    """One of the user's in-app notifications as machines see it; NotFound otherwise."""
    try:
        wanted = UUID(str(notification_id))
    except ValueError:
        raise errors.NotFound("No such notification.") from None
    row = _shown(user).where(Notification.id == wanted).first()
    if row is None:
        raise errors.NotFound("No such notification.")
    return as_dict(row)


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


class Listener:
    """A live follower of one user's new in-app notifications (their Redis channel).

    Subscribed when made, so nothing published afterwards is missed; ``next`` waits for one.
    Used outside a request (a stream's generator): it opens its own database connection
    for each read.
    """

    def __init__(self, user_id: UUID) -> None:
        self.user_id = user_id
        try:
            self._pubsub = jobs.connection().pubsub(ignore_subscribe_messages=True)
            self._pubsub.subscribe(topic(user_id))
        except redis.RedisError as exc:
            raise errors.CacheUnavailable("Live notifications need Redis, which is not "
                                          "answering.") from exc

    def next(self, timeout: float) -> dict[str, Any] | None:
        """The next new notification within ``timeout`` seconds, or None (CacheUnavailable
        when Redis fails: the stream ends and the client listens again)."""
        try:
            message = self._pubsub.get_message(timeout=timeout)
        except redis.RedisError as exc:
            raise errors.CacheUnavailable() from exc
        if message is None or message.get("type") != "message":
            return None
        raw = message["data"]
        opened = db.connect(reuse_if_open=True)
        try:
            return get(self.user_id, raw.decode() if isinstance(raw, bytes) else str(raw))
        except errors.NotFound:  # deleted meanwhile
            return None
        finally:
            if opened:
                db.close()

    def close(self) -> None:
        """Unsubscribe and hand the connection back."""
        try:
            self._pubsub.close()
        except redis.RedisError:
            log.debug("closing a notification listener failed", exc_info=True)
