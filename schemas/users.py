"""The user profile."""

from __future__ import annotations

from marshmallow import Schema, fields


class UserProfileSchema(Schema):
    """The signed-in user's profile."""

    id = fields.UUID(required=True)
    email = fields.String(required=True)
    tier = fields.String(required=True, metadata={"enum": ["free", "pro", "elite"]})
    created_at = fields.DateTime(required=True)
    trading_wallet_address = fields.String(
        required=True, allow_none=True,
        metadata={"description": "The user's trading wallet, null until it is created.",
                  "pattern": "^0x[0-9a-fA-F]{40}$"})
