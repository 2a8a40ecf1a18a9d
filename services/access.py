"""Who is calling: the Principal, the scope list, and the one credential resolver.

``resolve(authorization, settings)`` turns an ``Authorization: Bearer ...`` header
into a Principal (user, credential kind, scopes). Tokens are dispatched by prefix
through a registry: ``svck_`` (API keys, services/keys.py), ``svco_`` (OAuth access
tokens: the OAuth module registers its resolver with ``register_resolver``; until
then such tokens are invalid), anything else is tried as a session JWT.
Services receive the Principal; nothing here knows about Flask.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from uuid import UUID

from models import User
from schemas.keys import SCOPES
from services import errors

ALL_SCOPES: frozenset[str] = frozenset(SCOPES)

__all__ = ["ALL_SCOPES", "SCOPES", "Principal", "register_resolver", "require_enabled",
           "resolve"]

CredentialKind = Literal["session", "api_key", "oauth"]


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: the user, how they authenticated, and what they may do."""

    user: User
    kind: CredentialKind
    scopes: frozenset[str]
    credential_id: UUID | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def user_id(self) -> UUID:
        """The caller's user id."""
        return self.user.id

    @property
    def is_session(self) -> bool:
        """True for a session JWT (full account scope)."""
        return self.kind == "session"

    def has_scope(self, scope: str) -> bool:
        """True when the credential carries ``scope`` (a session carries all)."""
        return self.is_session or scope in self.scopes

    def require_scope(self, scope: str) -> None:
        """Raise ScopeRequired (403) unless the credential carries ``scope``."""
        if scope not in ALL_SCOPES:
            raise ValueError(f"unknown scope {scope!r}")
        if not self.has_scope(scope):
            raise errors.ScopeRequired(scope)

    def require_session(self) -> None:
        """Raise Forbidden (403 scope_required) unless this is a session JWT."""
        if not self.is_session:
            raise errors.Forbidden(
                "This action needs a session token (sign in); API keys and OAuth tokens "
                "are not accepted here.")

    def require_api_credential(self) -> None:
        """Raise InvalidToken (401) for a session JWT: only API keys and OAuth tokens pass."""
        if self.is_session:
            raise errors.InvalidToken(
                "Session tokens are not accepted here; use an API key or an OAuth token.")


# token, settings -> Principal; raises errors.InvalidToken when the token is not valid.
CredentialResolver = Callable[[str, Mapping[str, Any]], Principal]

_resolvers: dict[str, CredentialResolver] = {}
_session_resolver: list[CredentialResolver] = []


def register_resolver(prefix: str, resolver: CredentialResolver) -> None:
    """Route bearer tokens starting with ``prefix`` (e.g. ``svco_``) to ``resolver``."""
    _resolvers[prefix] = resolver


def register_session_resolver(resolver: CredentialResolver) -> None:
    """Set the resolver for tokens no prefix claims (session JWTs)."""
    _session_resolver[:] = [resolver]


def _no_oauth_yet(token: str, settings: Mapping[str, Any]) -> Principal:
    raise errors.InvalidToken("OAuth access tokens are not accepted by this server yet.")


register_resolver("svco_", _no_oauth_yet)


def bearer_token(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer`` header; Unauthorized (401) when absent."""
    if not authorization or not authorization.strip():
        raise errors.Unauthorized("Authentication required: send Authorization: Bearer <token>.")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        raise errors.Unauthorized("Use the Bearer scheme: Authorization: Bearer <token>.")
    token = token.strip()
    if not token:
        raise errors.Unauthorized("Authentication required: the bearer token is empty.")
    return token


def require_enabled(user: User) -> None:
    """Raise InvalidToken (401) when the operator disabled ``user``'s account.

    The one disabled-account check: every credential passes through ``resolve_token``;
    sign-in (services/auth.py) calls it before issuing a session, and configs.start
    under the user-row lock (a start racing the disable).
    """
    if user.disabled_at is not None:
        raise errors.InvalidToken("This account is disabled; ask the operator.")


def resolve_token(token: str, settings: Mapping[str, Any]) -> Principal:
    """The Principal for a bearer token; InvalidToken (401) when it is not valid."""
    _ensure_builtin_resolvers()
    resolver = next((resolver for prefix, resolver in _resolvers.items()
                     if token.startswith(prefix)), _session_resolver[0])
    principal = resolver(token, settings)
    require_enabled(principal.user)
    return principal


def resolve(authorization: str | None, settings: Mapping[str, Any]) -> Principal:
    """The Principal for an Authorization header: 401 unauthorized or invalid_token otherwise."""
    return resolve_token(bearer_token(authorization), settings)


def _ensure_builtin_resolvers() -> None:
    # Imported late: keys and auth import this module for Principal.
    if _builtin_loaded:
        return
    from services import auth, keys

    _resolvers.setdefault(keys.SECRET_PREFIX, keys.resolve)
    if not _session_resolver:
        register_session_resolver(auth.resolve_session)
    _builtin_loaded.append(True)


_builtin_loaded: list[bool] = []
