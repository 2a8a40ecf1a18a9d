"""Idempotency records: the durable lock and the saved first response of a keyed write."""

from __future__ import annotations

import peewee

from models.base import BaseModel, UTCDateTimeField, utcnow
from models.user import User


class IdempotencyRecord(BaseModel):
    """One (user, Idempotency-Key): running while ``status_code`` is null, then its response.

    The unique (user, key) index is the lock: only one request can insert it.
    """

    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    key = peewee.UUIDField()
    fingerprint = peewee.CharField(max_length=64)
    lock_token = peewee.UUIDField(null=True)
    locked_until = UTCDateTimeField()
    status_code = peewee.IntegerField(null=True)
    body = peewee.TextField(null=True)
    created_at = UTCDateTimeField(default=utcnow)
    expires_at = UTCDateTimeField(index=True)

    class Meta:
        table_name = "idempotency_records"
        indexes = ((("user", "key"), True),)
