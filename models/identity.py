"""Identity: one-time login codes, sign-in budgets, revoked sessions and scoped API keys.

Only hashes of secrets are stored.
"""

from __future__ import annotations

import peewee

from models.base import BaseModel, UTCDateTimeField, utcnow
from models.user import User

SIGN_IN = "sign_in"
STEP_UP = "step_up"


class LoginCode(BaseModel):
    """One emailed login: a 6-digit code and a one-time link token, both stored as keyed hashes.

    ``purpose`` keeps sign-in codes and step-up codes (a fresh code before moving money)
    apart; ``browser_hash`` is a keyed hash of the nonce the asking browser holds, so the
    link can tell the browser that asked from any other one.
    """

    email = peewee.CharField(max_length=320, index=True)
    code_hash = peewee.CharField(max_length=64)
    link_hash = peewee.CharField(max_length=64, unique=True)
    purpose = peewee.CharField(max_length=16, default=SIGN_IN)
    browser_hash = peewee.CharField(max_length=64, null=True)
    attempts = peewee.IntegerField(default=0)
    created_at = UTCDateTimeField(default=utcnow)
    expires_at = UTCDateTimeField()
    consumed_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "login_codes"


class SignInEvent(BaseModel):
    """One sign-in email sent or one code tried, counted by address and by client IP.

    The sign-in budgets (services/identity/sign_in_budget.py) count these rows, so they hold in the
    database whether or not Redis is up.
    """

    kind = peewee.CharField(max_length=16)  # "email" (a code sent) or "miss" (a wrong code)
    email = peewee.CharField(max_length=320)
    ip = peewee.CharField(max_length=64)
    created_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "sign_in_events"
        indexes = ((("email", "kind", "created_at"), False), (("ip", "kind", "created_at"), False))


class RevokedSession(BaseModel):
    """A signed-out session JWT (its ``jti``), kept until the JWT would have expired."""

    jti = peewee.CharField(max_length=64, unique=True)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    expires_at = UTCDateTimeField(index=True)

    class Meta:
        table_name = "revoked_sessions"


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
    # Money-moving MCP tools ask a person first (issue 47) unless the owner turned this off.
    confirm_money_tools = peewee.BooleanField(default=True)

    class Meta:
        table_name = "api_keys"
        indexes = ((("user", "created_at"), False),)

    @property
    def scope_list(self) -> list[str]:
        """The scopes as a list."""
        return self.scopes.split()
