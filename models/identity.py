"""Identity: one-time login codes and scoped API keys (only hashes of secrets are stored)."""

from __future__ import annotations

import peewee

from models.base import BaseModel, UTCDateTimeField, utcnow
from models.user import User


class LoginCode(BaseModel):
    """One emailed login: a 6-digit code and a one-time link token, both stored as keyed hashes."""

    email = peewee.CharField(max_length=320, index=True)
    code_hash = peewee.CharField(max_length=64)
    link_hash = peewee.CharField(max_length=64, unique=True)
    attempts = peewee.IntegerField(default=0)
    created_at = UTCDateTimeField(default=utcnow)
    expires_at = UTCDateTimeField()
    consumed_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "login_codes"


class ApiKey(BaseModel):
    """A bearer key with explicit scopes; the secret itself is never stored."""

    user = peewee.ForeignKeyField(User, backref="api_keys", on_delete="CASCADE")
    name = peewee.CharField(max_length=80)
    prefix = peewee.CharField(max_length=32)
    key_hash = peewee.CharField(max_length=64, unique=True)
    scopes = peewee.TextField()  # space-separated, in the canonical scope order
    created_at = UTCDateTimeField(default=utcnow)
    last_used_at = UTCDateTimeField(null=True)
    expires_at = UTCDateTimeField(null=True)
    revoked_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "api_keys"
        indexes = ((("user", "created_at"), False),)

    @property
    def scope_list(self) -> list[str]:
        """The scopes as a list."""
        return self.scopes.split()
