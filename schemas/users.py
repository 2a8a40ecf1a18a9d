"""The user profile."""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields

from schemas.fields import DecimalString


class TierLimitsSchema(Schema):
    """What the user's tier allows; null means unlimited."""

    max_active_configs = fields.Integer(
        required=True, allow_none=True,
        metadata={"description": "Copy configs that may run at once; null: unlimited."})
    max_api_keys = fields.Integer(
        required=True, allow_none=True,
        metadata={"description": "Usable (unrevoked, unexpired) API keys; null: unlimited."})


class UserProfileSchema(Schema):
    """The signed-in user's profile."""

    id = fields.UUID(required=True)
    email = fields.String(required=True)
    tier = fields.String(required=True, metadata={
        "description": "The plan whose limits apply. The operator names the tiers "
                       "(built in: self-hosted, free, pro, elite) and moves accounts "
                       "between them."})
    limits = fields.Nested(TierLimitsSchema, required=True)
    created_at = fields.DateTime(required=True)
    trading_wallet_address = fields.String(
        required=True, allow_none=True,
        metadata={"description": "The user's trading wallet where its funds are (the "
                                 "deposit wallet, the maker), null until it is created.",
                  "pattern": "^0x[0-9a-fA-F]{40}$"})


class UserLimitsSchema(Schema):
    """The user's own limits across all its copy configs (PUT body and answer)."""

    class Meta:
        unknown = RAISE

    max_total_exposure_usdc = DecimalString(allow_none=True, metadata={
        "description": "The most cost basis (pUSD) all the user's copy configs may hold at "
                       "once; a buy past it is cut down, or skipped with `exposure_limit`. "
                       "Null: no limit."})
