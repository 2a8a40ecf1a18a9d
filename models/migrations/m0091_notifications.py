"""Notifications (issue 28): events per user (``notifications``, unique by the emitter's key),
channels, per-channel preferences and deliveries (recorded before sending, retried)."""

import uuid

import peewee


class User(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "users"


class Notification(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE", index=True)
    key = peewee.CharField(max_length=200, unique=True)
    type = peewee.CharField(max_length=40)
    payload = peewee.TextField(default="{}")
    title = peewee.CharField(max_length=200)
    text = peewee.TextField()
    in_app = peewee.BooleanField(default=True)
    created_at = peewee.DateTimeField(index=True)
    read_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "notifications"


class NotificationChannel(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE", index=True)
    kind = peewee.CharField(max_length=16)
    label = peewee.CharField(max_length=100, default="")
    target = peewee.TextField(default="")
    secret_sealed = peewee.TextField(null=True)
    previous_secret_sealed = peewee.TextField(null=True)
    previous_secret_until = peewee.DateTimeField(null=True)
    link_code_hash = peewee.CharField(max_length=64, null=True, unique=True)
    link_code_expires_at = peewee.DateTimeField(null=True)
    enabled = peewee.BooleanField(default=True)
    disabled_reason = peewee.CharField(max_length=200, null=True)
    created_at = peewee.DateTimeField()

    class Meta:
        table_name = "notification_channels"


class NotificationPreference(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE", index=True)
    channel = peewee.ForeignKeyField(NotificationChannel, null=True, on_delete="CASCADE")
    event_type = peewee.CharField(max_length=40)
    enabled = peewee.BooleanField(default=True)
    min_amount = peewee.TextField(null=True)
    reasons = peewee.TextField(null=True)

    class Meta:
        table_name = "notification_preferences"
        indexes = ((("user", "channel", "event_type"), True),)


class NotificationDelivery(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    channel = peewee.ForeignKeyField(NotificationChannel, on_delete="CASCADE", index=True)
    notification = peewee.ForeignKeyField(Notification, null=True, on_delete="CASCADE")
    digest = peewee.ForeignKeyField("self", null=True, on_delete="SET NULL")
    digest_text = peewee.TextField(null=True)
    status = peewee.CharField(max_length=12, default="pending", index=True)
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = peewee.DateTimeField(index=True)
    lease_until = peewee.DateTimeField(null=True)
    last_status_code = peewee.IntegerField(null=True)
    last_latency_ms = peewee.IntegerField(null=True)
    last_error = peewee.CharField(max_length=300, null=True)
    created_at = peewee.DateTimeField(index=True)
    sent_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "notification_deliveries"
        indexes = ((("channel", "notification"), True),)


TABLES = [Notification, NotificationChannel, NotificationPreference, NotificationDelivery]


def apply(database: peewee.Database, migrator: object) -> None:
    """Create the four notification tables."""
    with database.bind_ctx([User, *TABLES]):
        database.create_tables(TABLES)
