"""A user's channels: add (a webhook's secret and a Telegram link code shown once), list,
remove, rotate a webhook's secret, send a test, read the delivery log. A URL is stored
sealed and shown as its scheme and host (services/notifications/secrets.py)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID, uuid4

from models.base import atomic, utcnow
from models.notifications import (
    DISCORD,
    EMAIL,
    PENDING,
    SLACK,
    TELEGRAM,
    WEBHOOK,
    Notification,
    NotificationChannel,
    NotificationDelivery,
)
from models.user import User
from services.notifications import catalogue, deliveries, telegram, urls
from services.notifications import secrets as channel_secrets
from services.platform import errors
from services.platform.pagination import DEFAULT_LIMIT, Page
from services.platform.runtime import runtime

LINK_CODE_TTL = timedelta(minutes=15)
MAX_CHANNELS = 20


@dataclass(frozen=True)
class Added:
    """A new channel, with what is shown only now: a webhook's secret, a Telegram link code."""

    channel: NotificationChannel
    secret: str | None = None
    link_code: str | None = None
    link_url: str | None = None
    url: str | None = None  # the whole URL the owner gave (shown only in this answer)


def link_code_hash(code: str) -> str:
    """How a Telegram link code is stored (the code itself never is)."""
    return telegram.link_code_hash(code)


def as_dict(channel: NotificationChannel, whole_url: str | None = None) -> dict[str, Any]:
    """A channel as the API shows it; never a secret: a URL channel's ``target`` is its
    scheme and host (the path or query may hold a token), unless ``whole_url`` is given (the
    answer to the owner who just sent it)."""
    target = channel.target
    if channel.kind in channel_secrets.URL_KINDS and target:
        target = whole_url or channel_secrets.shown_url(target)  # a row not moved yet too
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
    """Add a channel of ``kind``; ValidationFailed naming the field for a bad URL."""
    config = runtime().settings.notifications
    if NotificationChannel.select().where(NotificationChannel.user == user).count() \
            >= MAX_CHANNELS:
        raise errors.ValidationFailed(fields={"kind": [f"At most {MAX_CHANNELS} channels."]})
    label = (label or "").strip()[:100]
    if kind in channel_secrets.URL_KINDS:
        prefix = {DISCORD: config.discord_url_prefix, SLACK: config.slack_url_prefix}.get(kind)
        checked = urls.check(url or "", "url", config, prefix=prefix)
        channel_id = uuid4()
        secret = channel_secrets.new_secret() if kind == WEBHOOK else None
        channel = NotificationChannel.create(
            id=channel_id, user=user, kind=kind, label=label,
            target=channel_secrets.shown_url(checked),
            url_sealed=channel_secrets.seal(channel_id, checked, "url_sealed"),
            secret_sealed=channel_secrets.seal(channel_id, secret) if secret else None)
        return Added(channel, secret=secret, url=checked)
    if kind == EMAIL:
        return Added(NotificationChannel.create(user=user, kind=kind, label=label or user.email,
                                                target=user.email))
    if kind == TELEGRAM:
        if not config.telegram_bot_token:
            raise errors.FeatureNotEnabled("Telegram is not set up on this server "
                                           "(TELEGRAM_BOT_TOKEN).")
        code = secrets.token_urlsafe(12)
        channel = NotificationChannel.create(
            user=user, kind=kind, label=label or "Telegram", enabled=False,
            disabled_reason="waiting for /start in Telegram",
            link_code_hash=link_code_hash(code), link_code_expires_at=utcnow() + LINK_CODE_TTL)
        bot = config.telegram_bot_username
        return Added(channel, link_code=code,
                     link_url=f"https://t.me/{bot}?start={code}" if bot else None)
    raise errors.ValidationFailed(fields={"kind": ["Unknown channel kind."]})


def remove(user: User, channel_id: UUID) -> None:
    """Delete one of the user's channels (its preferences and log go with it)."""
    get(user, channel_id).delete_instance(recursive=True)


def rotate_secret(user: User, channel_id: UUID) -> dict[str, Any]:
    """A new signing secret for a webhook (shown once); the old one keeps signing beside it
    for NOTIFY_WEBHOOK_ROTATION_OVERLAP_SECONDS."""
    channel = get(user, channel_id)
    if channel.kind != WEBHOOK:
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
