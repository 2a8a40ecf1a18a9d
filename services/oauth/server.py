"""authlib glue: our grants, endpoints and RFC 8414 metadata (no Flask here).

The Flask ``AuthorizationServer`` (blueprints/oauth/server.py) registers these. What they
add to authlib:

- authorization code + PKCE, **S256 only and required** (``plain`` and a
  missing challenge are ``invalid_request``);
- RFC 8707 ``resource`` bound into codes and tokens (services/oauth/resources.py);
- codes single use (a reused code revokes what it issued), refresh tokens that
  rotate (a reused one revokes the family);
- RFC 7009 revocation, RFC 7591 open registration, RFC 9207 ``iss``.
"""

from __future__ import annotations

from typing import Any

from authlib.oauth2.rfc6749 import (
    AuthorizationCodeMixin,
    InvalidGrantError,
    InvalidRequestError,
    OAuth2Error,
    TokenMixin,
    grants,
)
from authlib.oauth2.rfc7009 import RevocationEndpoint as _RevocationEndpoint
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint as _RegistrationEndpoint
from authlib.oauth2.rfc7591 import InvalidClientMetadataError, InvalidRedirectURIError
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc9207 import IssuerParameter

from models.oauth import AuthorizationCode, OAuthToken
from models.user import User
from schemas.vocabulary import SCOPES
from services.oauth import clients as oauth_clients
from services.oauth import resources as oauth_resources
from services.oauth import tokens as oauth
from services.platform.runtime import runtime

AUTHORIZE_PATH = "/oauth/authorize"
TOKEN_PATH = "/oauth/token"
REGISTER_PATH = "/oauth/register"
REVOKE_PATH = "/oauth/revoke"
CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]


def issuer() -> str:
    """The authorization server's issuer identifier: BASE_URL."""
    return runtime().settings.base_url


def authorization_server_metadata() -> dict[str, Any]:
    """The RFC 8414 document served at /.well-known/oauth-authorization-server."""
    base = issuer()
    return {
        "issuer": base,
        "authorization_endpoint": base + AUTHORIZE_PATH,
        "token_endpoint": base + TOKEN_PATH,
        "registration_endpoint": base + REGISTER_PATH,
        "revocation_endpoint": base + REVOKE_PATH,
        "scopes_supported": list(SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": list(CLIENT_AUTH_METHODS),
        "revocation_endpoint_auth_methods_supported": list(CLIENT_AUTH_METHODS),
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
        "service_documentation": base + "/api/docs",
    }


class CodeView(AuthorizationCodeMixin):
    """authlib's view of a stored authorization code."""

    def __init__(self, record: AuthorizationCode) -> None:
        self.record = record
        self.code_challenge = record.code_challenge
        self.code_challenge_method = record.code_challenge_method

    def get_redirect_uri(self) -> str:
        """The redirect URI the code was issued to."""
        return self.record.redirect_uri

    def get_scope(self) -> str:
        """The approved scopes, within what the approval allows now."""
        return oauth.clamp_scope(self.record.scope, self.record.approval)


class TokenView(TokenMixin):
    """authlib's view of a stored token pair, as found by one of its two secrets."""

    def __init__(self, record: OAuthToken, kind: str) -> None:
        self.record = record
        self.kind = kind  # "access_token" or "refresh_token"

    def check_client(self, client: oauth_clients.Client) -> bool:
        """True when the token was issued to ``client``."""
        return self.record.client_id == client.record.id

    def get_scope(self) -> str:
        """The granted scopes, within what the approval allows now (refresh narrows from it)."""
        return oauth.clamp_scope(self.record.scope, self.record.approval)

    def get_expires_in(self) -> int:
        """Lifetime of the access token in seconds."""
        return int(oauth.ACCESS_TOKEN_TTL.total_seconds())

    def is_revoked(self) -> bool:
        """True once revoked."""
        return self.record.revoked_at is not None

    def is_expired(self) -> bool:
        """True once the access token has expired."""
        return self.record.access_expires_at <= oauth.utcnow()

    def get_user(self) -> User:
        """The user who approved it."""
        return self.record.user

    def get_client(self) -> Any:
        """The client it was issued to."""
        return self.record.client


class S256CodeChallenge(CodeChallenge):
    """PKCE as OAuth 2.1 wants it: a challenge is required, and only S256 is accepted."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]
    DEFAULT_CODE_CHALLENGE_METHOD = "S256"

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        """Refuse authorization requests without an S256 code challenge."""
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("PKCE is required: send code_challenge with "
                                      "code_challenge_method=S256.")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("code_challenge_method must be S256; plain is not "
                                      "supported.")
        super().validate_code_challenge(grant, redirect_uri)


def _active_user(approval_id: Any) -> User | None:
    from models.oauth import Approval

    approval = Approval.get_or_none(Approval.id == approval_id)
    if approval is None or approval.revoked_at is not None:
        return None
    return approval.user


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    """Authorization code grant: public or confidential clients, PKCE, resource-bound codes."""

    TOKEN_ENDPOINT_AUTH_METHODS = CLIENT_AUTH_METHODS

    def validate_authorization_request(self) -> str:
        """authlib's checks, then the RFC 8707 resource the code will be bound to."""
        redirect_uri = super().validate_authorization_request()
        try:
            self.request.resource = oauth_resources.select(
                self.request.payload.datalist.get("resource", []))
        except OAuth2Error as error:
            error.redirect_uri = redirect_uri
            raise
        return redirect_uri

    def generate_authorization_code(self) -> str:
        """32 random bytes, URL-safe."""
        return oauth.new_code()

    def save_authorization_code(self, code: str, request: Any) -> None:
        """Store the code's hash with the scopes the user approved (set by the consent view)."""
        data = request.payload.data
        oauth.store_code(
            code, client=request.client.record, user=request.user,
            approval=request.approval, redirect_uri=data.get("redirect_uri") or "",
            scope=request.approved_scope, resource=request.resource,
            code_challenge=data["code_challenge"],
            code_challenge_method=data["code_challenge_method"])

    def query_authorization_code(self, code: str, client: oauth_clients.Client
                                 ) -> CodeView | None:
        """The unused, unexpired code of ``client`` (a reused one revokes its tokens)."""
        record = oauth.find_code(code, client.record)
        return CodeView(record) if record is not None else None

    def delete_authorization_code(self, authorization_code: CodeView) -> None:
        """Nothing left to do: the code was consumed before tokens were issued."""

    def authenticate_user(self, authorization_code: CodeView) -> User | None:
        """The approving user, while the approval stands."""
        return _active_user(authorization_code.record.approval_id)

    def validate_token_request(self) -> None:
        """authlib's checks (client, code, redirect URI, PKCE), then the resource."""
        super().validate_token_request()
        code = self.request.authorization_code
        oauth_resources.check_token_request(self.request.payload.datalist.get("resource", []),
                                            code.record.resource)

    def create_token_response(self) -> tuple[int, dict[str, Any], list[tuple[str, str]]]:
        """Consume the code (once) and issue a token pair bound to its resource."""
        code: AuthorizationCode = self.request.authorization_code.record
        client: oauth_clients.Client = self.request.client
        if not oauth.consume_code(code):
            oauth.revoke_family(code.family_id)
            raise InvalidGrantError("The authorization code was already used.")
        user = self.authenticate_user(self.request.authorization_code)
        if user is None:
            raise InvalidGrantError("The approval behind this code was revoked.")
        self.request.user = user
        issued = oauth.issue_tokens(
            client=client.record, user=user, approval=code.approval,
            scope=oauth.clamp_scope(code.scope, code.approval), resource=code.resource,
            family_id=code.family_id,
            with_refresh=client.check_grant_type("refresh_token"))
        return 200, issued.response(), self.TOKEN_RESPONSE_HEADER


class RefreshTokenGrant(grants.RefreshTokenGrant):
    """Refresh with rotation: each refresh token works once; a reused one revokes the family."""

    TOKEN_ENDPOINT_AUTH_METHODS = CLIENT_AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token: str) -> TokenView | None:
        """The usable refresh token, or None (reuse revokes the family)."""
        record = oauth.usable_refresh_token(refresh_token)
        return TokenView(record, "refresh_token") if record is not None else None

    def authenticate_user(self, refresh_token: TokenView) -> User | None:
        """The approving user, while the approval stands."""
        return _active_user(refresh_token.record.approval_id)

    def validate_token_request(self) -> None:
        """authlib's checks (client, token, scope narrowing), then the resource."""
        super().validate_token_request()
        oauth_resources.check_token_request(self.request.payload.datalist.get("resource", []),
                                            self.request.refresh_token.record.resource)

    def create_token_response(self) -> tuple[int, dict[str, Any], list[tuple[str, str]]]:
        """Retire the presented refresh token (once) and issue a new pair in the same family."""
        old: OAuthToken = self.request.refresh_token.record
        user = self.authenticate_user(self.request.refresh_token)
        if user is None:
            raise InvalidGrantError("The approval behind this token was revoked.")
        if not oauth.rotate(old):
            oauth.revoke_family(old.family_id)
            raise InvalidGrantError("The refresh token was already used.")
        requested = self.request.payload.scope
        # authlib checked ``requested`` against get_scope(), which is already clamped.
        scope = oauth.clamp_scope(requested or old.scope, old.approval)
        self.request.user = user
        issued = oauth.issue_tokens(
            client=old.client, user=user, approval=old.approval,
            scope=scope, resource=old.resource, family_id=old.family_id, with_refresh=True)
        return 200, issued.response(), self.TOKEN_RESPONSE_HEADER

    def revoke_old_credential(self, refresh_token: TokenView) -> None:
        """Done in create_token_response, atomically, before anything is issued."""


class RevocationEndpoint(_RevocationEndpoint):
    """RFC 7009: a client revokes its own tokens; a refresh token takes its family with it."""

    CLIENT_AUTH_METHODS = CLIENT_AUTH_METHODS

    def query_token(self, token_string: str, token_type_hint: str | None) -> TokenView | None:
        """Find the token by its prefix (the hint is not needed)."""
        if token_string.startswith(oauth.ACCESS_TOKEN_PREFIX):
            record = oauth.find_access_token(token_string)
            return TokenView(record, "access_token") if record else None
        record = oauth.find_refresh_token(token_string)
        return TokenView(record, "refresh_token") if record else None

    def authenticate_token(self, request: Any, client: oauth_clients.Client) -> TokenView | None:
        """Another client's token is treated as unknown: 200, nothing revoked."""
        self.check_params(request, client)
        token = self.query_token(request.form["token"], request.form.get("token_type_hint"))
        if token is None or not token.check_client(client):
            return None
        return token

    def revoke_token(self, token: TokenView, request: Any) -> None:
        """Revoke the pair; for a refresh token, every token of its family."""
        oauth.revoke_token(token.record, whole_family=token.kind == "refresh_token")


class ClientRegistrationEndpoint(_RegistrationEndpoint):
    """RFC 7591 open registration: anyone may register; users still consent per client."""

    def authenticate_token(self, request: Any) -> bool:
        """Registration needs no initial access token."""
        return True

    def create_registration_response(self, request: Any
                                     ) -> tuple[int, dict[str, Any], list[tuple[str, str]]]:
        """Validate the metadata, store the client, answer 201 with its information."""
        metadata = request.payload.data
        try:
            record, secret = oauth_clients.register(
                metadata if isinstance(metadata, dict) else {})
        except oauth_clients.ClientMetadataError as exc:
            cls = (InvalidRedirectURIError if exc.error == "invalid_redirect_uri"
                   else InvalidClientMetadataError)
            raise cls(exc.description) from None
        body = oauth_clients.registration_response(record, secret)
        return 201, body, [("Content-Type", "application/json"), ("Cache-Control", "no-store"),
                           ("Pragma", "no-cache")]


class Issuer(IssuerParameter):
    """RFC 9207: ``iss`` on every authorization response redirect."""

    def get_issuer(self) -> str:
        """BASE_URL."""
        return issuer()
