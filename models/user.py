"""Users: one account per email address."""

from __future__ import annotations

import peewee

from models.base import BaseModel, DecimalTextField, UTCDateTimeField, utcnow


class User(BaseModel):
    """A person with an account; ``tier`` names a row of the configured tier table.

    Sign-up stores the configured default tier (services/identity/auth.py); the column default
    only serves rows made directly. ``disabled_at`` set: the operator disabled the
    account, and none of its credentials is accepted.
    """

    email = peewee.CharField(max_length=320, unique=True)
    tier = peewee.CharField(max_length=16, default="free")
    created_at = UTCDateTimeField(default=utcnow)
    disabled_at = UTCDateTimeField(null=True)
    # Session JWTs issued before this moment are refused ("sign out everywhere").
    sessions_valid_after = UTCDateTimeField(null=True)
    # The most pUSD of cost basis all the user's copy configs may hold at once (None: no cap).
    max_total_exposure_usdc = DecimalTextField(null=True)

    class Meta:
        table_name = "users"
