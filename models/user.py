"""Users: one account per email address."""

from __future__ import annotations

import peewee

from models.base import BaseModel, UTCDateTimeField, utcnow

TIERS = ("free", "pro", "elite")


class User(BaseModel):
    """A person with an account; ``tier`` selects the limits in config."""

    email = peewee.CharField(max_length=320, unique=True)
    tier = peewee.CharField(max_length=16, default="free")
    created_at = UTCDateTimeField(default=utcnow)
    # Session JWTs issued before this moment are refused ("sign out everywhere").
    sessions_valid_after = UTCDateTimeField(null=True)

    class Meta:
        table_name = "users"
