"""A user's channels: add (a webhook's secret and a Telegram link code shown once), list,
remove, rotate a webhook's secret, send a test, read the delivery log. What differs by kind
(checking, showing, sending) is its provider's (services/notifications/providers/)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from uuid import UUID, uuid4

from models.base import atomic, utcnow
from models.notifications import (
    PENDING,
    Notification,
    NotificationChannel,
    NotificationDelivery,
)
from models.user import User
from services.notifications import catalogue, deliveries, providers
from services.notifications import secrets as channel_secrets
from services.notifications.providers import Added
from services.platform import errors
from services.platform.pagination import DEFAULT_LIMIT, Page
from services.platform.runtime import runtime

__all__ = ["MAX_CHANNELS", "Added", "add", "as_dict", "delivery_log", "get", "list_channels",
           "remove", "rotate_secret", "send_test"]

MAX_CHANNELS = 20


def as_dict(channel: NotificationChannel, whole_url: str | None = None) -> dict[str, Any]:
    """A channel as the API shows it; never a secret: its kind's provider says what of
    ``target`` may be shown (a URL channel's scheme and host, unless ``whole_url`` is given:
    the answer to the owner who just sent it)."""
    target = providers.get(channel.kind).shown_target(channel, whole_url)
    return {"id": channel.id, "kind": channel.kind, "label": channel.label,
            "target": target, "enabled": channel.enabled,
            "disabled_reason": channel.disabled_reason,
            "linked": bool(channel.target), "created_at": channel.created_at}


def list_channels(user: User) -> list[NotificationChannel]:
    """The user's channels, oldest first."""
    return list(NotificationChannel.select().where(NotificationChannel.user == user)
                .order_by(NotificationChannel.created_at, NotificationChannel.id))


def get(user: User, channel_id: UUID) -> NotificationChannel:
    """One of the user's channels; NotFound for others'."""
    channel = NotificationChannel.get_or_none(NotificationChannel.id == channel_id,
                                              NotificationChannel.user == user)
    if channel is None:
        raise errors.NotFound("No such notification channel.")
    return channel


def add(user: User, kind: str, url: str | None = None, label: str = "") -> Added:
    """Add a channel of ``kind`` through its provider; ValidationFailed naming the field for
    an unknown kind or a bad URL."""
    if NotificationChannel.select().where(NotificationChannel.user == user).count() \
            >= MAX_CHANNELS:
        raise errors.ValidationFailed(fields={"kind": [f"At most {MAX_CHANNELS} channels."]})
    return providers.get(kind).add(user, url, (label or "").strip()[:100])


def remove(user: User, channel_id: UUID) -> None:
    """Delete one of the user's channels (its preferences and log go with it)."""
    get(user, channel_id).delete_instance(recursive=True)


def rotate_secret(user: User, channel_id: UUID) -> dict[str, Any]:
    """A new signing secret for a webhook (shown once); the old one keeps signing beside it
    for NOTIFY_WEBHOOK_ROTATION_OVERLAP_SECONDS."""
    channel = get(user, channel_id)
    if not providers.get(channel.kind).signs:
        raise errors.ValidationFailed(fields={"channel_id": ["Only webhooks have a secret."]})
    overlap = timedelta(seconds=runtime().settings.notifications.rotation_overlap_seconds)
    secret = channel_secrets.new_secret()
    until = utcnow() + overlap
    NotificationChannel.update(
        secret_sealed=channel_secrets.seal(channel.id, secret),
        previous_secret_sealed=channel.secret_sealed, previous_secret_until=until,
    ).where(NotificationChannel.id == channel.id).execute()
    return {"secret": secret, "previous_valid_until": until}


def send_test(user: User, channel_id: UUID) -> dict[str, Any]:
    """Send a test event to one channel now; the delivery as its log shows it."""
    channel = get(user, channel_id)
    if not channel.enabled:
        raise errors.ValidationFailed(fields={"channel_id": ["This channel is off."]})
    title, text = catalogue.render("notification.test", {})
    with atomic():
        event = Notification.create(user=user, key=f"notification.test:{uuid4()}",
                                    type="notification.test", title=title, text=text,
                                    in_app=False)
        delivery = NotificationDelivery.create(channel=channel, notification=event,
                                               status=PENDING, next_attempt_at=utcnow())
    deliveries.deliver(delivery.id)
    return deliveries.log_page(channel, limit=1).items[0]


def delivery_log(user: User, channel_id: UUID, limit: int = DEFAULT_LIMIT,
                 offset: int = 0) -> Page[dict[str, Any]]:
    """The channel's delivery log, newest first."""
    return deliveries.log_page(get(user, channel_id), limit, offset)
