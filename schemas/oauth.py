"""OAuth: approvals (JSON under /api/oauth/approvals) and the OAuth error/metadata documents."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from schemas.keys import SCOPES


class ApprovalSchema(Schema):
    """A client the user approved, with the scopes approved."""

    class Meta:
        ordered = True

    id = fields.UUID(required=True)
    client_id = fields.String(required=True, attribute="client.client_id", metadata={
        "description": "The OAuth client_id (a random id, or the URL of the client's "
                       "metadata document)."})
    client_name = fields.Function(
        lambda approval: approval.client.client_name or approval.client.client_id,
        required=True, metadata={"type": "string"})
    scopes = fields.List(fields.String(validate=validate.OneOf(SCOPES)), required=True,
                         attribute="scope_list")
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True, metadata={
        "description": "When the user last approved (re-approving replaces the scopes)."})
    confirm_money_tools = fields.Boolean(required=True, metadata={
        "description": "Whether a person confirms this app's money-moving MCP tool calls "
                       "(on by default)."})


class OAuthErrorSchema(Schema):
    """The RFC 6749 section 5.2 error body the /oauth endpoints answer (not `{error, code}`)."""

    error = fields.String(required=True, metadata={
        "description": "`invalid_request`, `invalid_client`, `invalid_grant`, "
                       "`unauthorized_client`, `unsupported_grant_type`, `invalid_scope`, "
                       "`invalid_target` (RFC 8707), `unsupported_token_type` (RFC 7009), "
                       "`invalid_redirect_uri` or `invalid_client_metadata` (RFC 7591)."})
    error_description = fields.String(metadata={"description": "For developers."})


class TokenResponseSchema(Schema):
    """RFC 6749 section 5.1."""

    class Meta:
        ordered = True

    access_token = fields.String(required=True, metadata={"example": "svco_..."})
    token_type = fields.String(required=True, metadata={"example": "Bearer"})
    expires_in = fields.Integer(required=True, metadata={"example": 3600})
    scope = fields.String(required=True, metadata={
        "description": "The scopes the user approved (may be fewer than requested)."})
    refresh_token = fields.String(metadata={
        "example": "svcr_...", "description": "Single use: each refresh returns a new one."})


class ClientInformationSchema(Schema):
    """RFC 7591 section 3.2.1: the registered client."""

    class Meta:
        ordered = True

    client_id = fields.String(required=True)
    client_secret = fields.String(metadata={
        "description": "Only for confidential clients (client_secret_basic/_post)."})
    client_id_issued_at = fields.Integer(required=True)
    client_secret_expires_at = fields.Integer(metadata={"description": "0: never."})
    client_name = fields.String()
    redirect_uris = fields.List(fields.String(), required=True)
    grant_types = fields.List(fields.String(), required=True)
    response_types = fields.List(fields.String(), required=True)
    token_endpoint_auth_method = fields.String(required=True)
    scope = fields.String()
