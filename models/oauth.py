"""OAuth 2.1: registered or metadata-document clients, authorization codes, tokens, approvals.

Codes, access tokens and refresh tokens are stored only as keyed hashes
(services/platform/keyring.py), as API keys are. Tokens issued from one authorization
code and every rotation after it share a ``family_id``: a reused refresh token
or code revokes the whole family.
"""

from __future__ import annotations

import json

import peewee

from models.base import BaseModel, UTCDateTimeField, utcnow
from models.user import User


class OAuthClient(BaseModel):
    """A client: dynamically registered (RFC 7591) or known by its metadata document URL."""

    client_id = peewee.CharField(max_length=2048, unique=True)
    kind = peewee.CharField(max_length=16)  # "registered" or "metadata_doc"
    client_secret_hash = peewee.CharField(max_length=64, null=True)
    client_name = peewee.CharField(max_length=200, default="")
    client_uri = peewee.TextField(null=True)
    logo_uri = peewee.TextField(null=True)
    redirect_uris = peewee.TextField()  # JSON array, matched exactly
    grant_types = peewee.TextField()  # space-separated
    response_types = peewee.TextField()  # space-separated
    scope = peewee.TextField(null=True)  # space-separated; None: any supported scope
    token_endpoint_auth_method = peewee.CharField(max_length=32)
    created_at = UTCDateTimeField(default=utcnow)
    metadata_fetched_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "oauth_clients"

    @property
    def redirect_uri_list(self) -> list[str]:
        """The registered redirect URIs."""
        return list(json.loads(self.redirect_uris))


class Approval(BaseModel):
    """A user's consent for one client: the scopes approved; revoking it revokes its tokens."""

    user = peewee.ForeignKeyField(User, backref="oauth_approvals", on_delete="CASCADE")
    client = peewee.ForeignKeyField(OAuthClient, backref="approvals", on_delete="CASCADE")
    scope = peewee.TextField()
    created_at = UTCDateTimeField(default=utcnow)
    updated_at = UTCDateTimeField(default=utcnow)
    revoked_at = UTCDateTimeField(null=True)
    # Money-moving MCP tools ask a person first (issue 47) unless the owner turned this off.
    confirm_money_tools = peewee.BooleanField(default=True)

    class Meta:
        table_name = "oauth_approvals"
        indexes = ((("user", "client"), True),)

    @property
    def scope_list(self) -> list[str]:
        """The approved scopes as a list."""
        return self.scope.split()


class AuthorizationCode(BaseModel):
    """A one-time code bound to client, redirect URI, PKCE challenge and resource."""

    code_hash = peewee.CharField(max_length=64, unique=True)
    client = peewee.ForeignKeyField(OAuthClient, on_delete="CASCADE")
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    approval = peewee.ForeignKeyField(Approval, on_delete="CASCADE")
    redirect_uri = peewee.TextField()
    scope = peewee.TextField()
    resource = peewee.TextField()
    code_challenge = peewee.CharField(max_length=128)
    code_challenge_method = peewee.CharField(max_length=8)
    family_id = peewee.UUIDField(index=True)
    created_at = UTCDateTimeField(default=utcnow)
    expires_at = UTCDateTimeField()
    used_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "oauth_authorization_codes"


class OAuthToken(BaseModel):
    """An access token (``svco_``) and its refresh token, both stored as keyed hashes."""

    access_token_hash = peewee.CharField(max_length=64, unique=True)
    refresh_token_hash = peewee.CharField(max_length=64, unique=True, null=True)
    client = peewee.ForeignKeyField(OAuthClient, on_delete="CASCADE")
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    approval = peewee.ForeignKeyField(Approval, backref="tokens", on_delete="CASCADE")
    scope = peewee.TextField()
    resource = peewee.TextField()
    family_id = peewee.UUIDField(index=True)
    created_at = UTCDateTimeField(default=utcnow)
    access_expires_at = UTCDateTimeField()
    refresh_expires_at = UTCDateTimeField(null=True)
    rotated_at = UTCDateTimeField(null=True)  # its refresh token was exchanged
    revoked_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "oauth_tokens"

    @property
    def scope_list(self) -> list[str]:
        """The granted scopes as a list."""
        return self.scope.split()
