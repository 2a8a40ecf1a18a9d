"""API keys: ApiKey, ApiKeyCreateRequest, ApiKeyCreateResponse (SPEC "Resources")."""

from __future__ import annotations

from marshmallow import Schema, ValidationError, fields, validate, validates

from schemas.vocabulary import SCOPES


class ApiKeySchema(Schema):
    """A key as listed: never its secret."""

    class Meta:
        ordered = True

    id = fields.UUID(required=True)
    name = fields.String(required=True)
    prefix = fields.String(required=True, metadata={
        "description": "Safe-to-show leading part of the key.", "example": "svck_live_AbC123"})
    scopes = fields.List(fields.String(validate=validate.OneOf(SCOPES)), required=True,
                         attribute="scope_list")
    created_at = fields.DateTime(required=True)
    last_used_at = fields.DateTime(required=True, allow_none=True, metadata={
        "description": "Updated on use, at most once a minute."})
    expires_at = fields.DateTime(required=True, allow_none=True)
    revoked_at = fields.DateTime(required=True, allow_none=True)
    confirm_money_tools = fields.Boolean(required=True, metadata={
        "description": "Whether a person confirms this key's money-moving MCP tool calls "
                       "(on by default)."})


class ApiKeyCreateRequestSchema(Schema):
    """What to mint."""

    name = fields.String(required=True, validate=validate.Length(min=1, max=80))
    scopes = fields.List(fields.String(validate=validate.OneOf(SCOPES)), required=True,
                         validate=validate.Length(min=1),
                         metadata={"uniqueItems": True})
    expires_in_days = fields.Integer(
        strict=True, allow_none=True, load_default=90, validate=validate.Range(min=0, max=365),
        metadata={"description": "0 to 365; 0 means the key never expires; omitted or null "
                                 "means 90.", "default": 90})

    @validates("name")
    def name_not_blank(self, value: str, **kwargs: object) -> None:
        """A name of only spaces names nothing."""
        if not value.strip():
            raise ValidationError("Must not be blank.")

    @validates("scopes")
    def scopes_unique(self, value: list[str], **kwargs: object) -> None:
        """Each scope at most once."""
        if len(set(value)) != len(value):
            raise ValidationError("Scopes must not repeat.")


class ApiKeyUpdateRequestSchema(Schema):
    """What to change on a key: whether a person confirms its money-moving MCP calls."""

    confirm_money_tools = fields.Boolean(required=True, metadata={
        "description": "true: a person confirms each money-moving MCP call of this key (the "
                       "default); false: the key's agent moves money alone (needs "
                       "`X-Step-Up-Token`)."})


class ApiKeyCreateResponseSchema(ApiKeySchema):
    """A new key: every ApiKey field plus the secret, shown this once."""

    secret = fields.String(required=True, metadata={
        "description": "The full bearer token (`svck_live_...`); returned once, never again."})
