"""Notifications: what happened to a user (events), where they want to hear of it (channels,
preferences) and each attempt to tell them (deliveries), all durable.

An event's ``key`` is the emitter's id for what happened (``copy.filled:<intent id>``):
unique, so a second emit of the same thing records nothing. A delivery is written before
it is sent and keeps its attempts, its next try and the last answer, so a receiver that is
down loses nothing and the user can see what was sent.
"""

from __future__ import annotations

import peewee

from models.base import BaseModel, UTCDateTimeField, utcnow
from models.user import User

# The names of the first channel kinds, as ``kind`` stores them, for the modules that look
# rows up by kind. The kinds there are, and what each does, are the provider table's
# (services/notifications/providers/); in-app is every event's own row, not a channel.
WEBHOOK, EMAIL, TELEGRAM, DISCORD, SLACK = "webhook", "email", "telegram", "discord", "slack"

# Delivery states: pending (due at next_attempt_at) -> sending (claimed, lease_until) ->
# sent | pending again (a retry) | failed (retries spent); held (folded into the next
# digest by flood control) -> digested; cancelled (the channel went away).
PENDING, SENDING, SENT, FAILED, HELD, DIGESTED, CANCELLED = (
    "pending", "sending", "sent", "failed", "held", "digested", "cancelled")
DELIVERY_STATES = (PENDING, SENDING, SENT, FAILED, HELD, DIGESTED, CANCELLED)


class Notification(BaseModel):
    """One event for one user: its type, payload (amounts, markets, reasons, links; never a
    secret), the text rendered from its template, and when the user read it in the app."""

    user = peewee.ForeignKeyField(User, on_delete="CASCADE", index=True)
    key = peewee.CharField(max_length=200, unique=True)
    type = peewee.CharField(max_length=40)
    payload = peewee.TextField(default="{}")  # JSON
    title = peewee.CharField(max_length=200)
    text = peewee.TextField()
    in_app = peewee.BooleanField(default=True)  # shown in the notification centre
    created_at = UTCDateTimeField(default=utcnow, index=True)
    read_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "notifications"


class NotificationChannel(BaseModel):
    """One place a user is told: a webhook, their email, a linked Telegram chat, a Discord or
    Slack incoming webhook. A webhook's signing secret and a URL channel's URL are sealed
    (they must be read to sign and to send); during a rotation the previous secret signs too
    until ``previous_secret_until``."""

    user = peewee.ForeignKeyField(User, on_delete="CASCADE", index=True)
    kind = peewee.CharField(max_length=16)
    label = peewee.CharField(max_length=100, default="")
    # Email address, Telegram chat id, or a URL as shown (scheme, host, "…"): the whole
    # URL (its path or query may hold a token) is sealed in ``url_sealed``.
    target = peewee.TextField(default="")
    url_sealed = peewee.TextField(null=True)
    secret_sealed = peewee.TextField(null=True)
    previous_secret_sealed = peewee.TextField(null=True)
    previous_secret_until = UTCDateTimeField(null=True)
    link_code_hash = peewee.CharField(max_length=64, null=True, unique=True)  # Telegram
    link_code_expires_at = UTCDateTimeField(null=True)
    enabled = peewee.BooleanField(default=True)
    disabled_reason = peewee.CharField(max_length=200, null=True)
    created_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "notification_channels"


class NotificationPreference(BaseModel):
    """Whether one event type reaches one channel (None: the in-app centre), with thresholds:
    ``min_amount`` (pUSD, exact text) for events that carry an amount, ``reasons`` (comma
    separated) for events that carry a reason. No row: the event's default."""

    user = peewee.ForeignKeyField(User, on_delete="CASCADE", index=True)
    channel = peewee.ForeignKeyField(NotificationChannel, null=True, on_delete="CASCADE")
    event_type = peewee.CharField(max_length=40)
    enabled = peewee.BooleanField(default=True)
    min_amount = peewee.TextField(null=True)
    reasons = peewee.TextField(null=True)

    class Meta:
        table_name = "notification_preferences"
        indexes = ((("user", "channel", "event_type"), True),)


class NotificationDelivery(BaseModel):
    """One message to one channel: an event's, or a digest of held ones (``notification``
    None, ``digest_text`` set). Recorded before it is sent; each attempt updates it."""

    channel = peewee.ForeignKeyField(NotificationChannel, on_delete="CASCADE", index=True)
    notification = peewee.ForeignKeyField(Notification, null=True, on_delete="CASCADE")
    digest = peewee.ForeignKeyField("self", null=True, on_delete="SET NULL")
    digest_text = peewee.TextField(null=True)
    status = peewee.CharField(max_length=12, default=PENDING, index=True)
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(default=utcnow, index=True)
    lease_until = UTCDateTimeField(null=True)
    last_status_code = peewee.IntegerField(null=True)
    last_latency_ms = peewee.IntegerField(null=True)
    last_error = peewee.CharField(max_length=300, null=True)
    created_at = UTCDateTimeField(default=utcnow, index=True)
    sent_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "notification_deliveries"
        indexes = ((("channel", "notification"), True),)
