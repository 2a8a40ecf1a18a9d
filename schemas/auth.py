"""Login: the magic-link request, code verification and the session answer."""

from __future__ import annotations

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from schemas.users import UserProfileSchema

PURPOSES = ("sign_in", "step_up")


class MagicRequestSchema(Schema):
    """Either ``email`` (send a code and link) or ``token`` (redeem the emailed link)."""

    email = fields.String(metadata={"description": "Send a sign-in email to this address.",
                                    "example": "ada@example.com"})
    token = fields.String(metadata={"description": "The `token` of the emailed sign-in link."})
    purpose = fields.String(load_default="sign_in", validate=validate.OneOf(PURPOSES), metadata={
        "description": "`sign_in` (default): a code and a link to sign in. `step_up`: a "
                       "confirmation code (no link) for `POST /api/auth/step-up`, needed "
                       "before a session withdraws or mints a `wallet:write` key."})

    @validates_schema
    def one_of(self, data: dict, **kwargs: object) -> None:
        """Exactly one of email and token."""
        if ("email" in data) == ("token" in data):
            raise ValidationError("Send either email or token.", "email")


class StepUpRequestSchema(Schema):
    """The confirmation code emailed for a step-up."""

    code = fields.String(required=True, validate=validate.Regexp(
        r"^\s*[0-9]{6}\s*$", error="Must be the 6-digit code."),
        metadata={"example": "123456"})


class StepUpSchema(Schema):
    """A step-up token: send it as `X-Step-Up-Token` to withdraw or mint a `wallet:write` key."""

    step_up_token = fields.String(required=True)
    expires_at = fields.DateTime(required=True)


class VerifyCodeSchema(Schema):
    """The address and the 6-digit code emailed to it."""

    email = fields.String(required=True, metadata={"example": "ada@example.com"})
    code = fields.String(required=True, validate=validate.Regexp(
        r"^\s*[0-9]{6}\s*$", error="Must be the 6-digit code."),
        metadata={"example": "123456"})


class MagicSentSchema(Schema):
    """The answer to a sign-in email request (the same whether or not the address is known)."""

    status = fields.String(required=True, metadata={"example": "sent"})
    message = fields.String(required=True)


class SessionSchema(Schema):
    """A session: the bearer JWT, its type, expiry and the user."""

    token = fields.String(required=True, metadata={"description": "Session JWT (24 hours)."})
    token_type = fields.String(required=True, metadata={"example": "Bearer"})
    expires_at = fields.DateTime(required=True)
    user = fields.Nested(UserProfileSchema, required=True)
