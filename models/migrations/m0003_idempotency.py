"""Idempotency records."""

import uuid

import peewee


class User(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "users"


class IdempotencyRecord(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    key = peewee.UUIDField()
    fingerprint = peewee.CharField(max_length=64)
    lock_token = peewee.UUIDField(null=True)
    locked_until = peewee.DateTimeField()
    status_code = peewee.IntegerField(null=True)
    body = peewee.TextField(null=True)
    created_at = peewee.DateTimeField()
    expires_at = peewee.DateTimeField(index=True)

    class Meta:
        table_name = "idempotency_records"
        indexes = ((("user", "key"), True),)


def apply(database: peewee.Database, migrator: object) -> None:
    """Create idempotency_records."""
    with database.bind_ctx([User, IdempotencyRecord]):
        database.create_tables([IdempotencyRecord])
