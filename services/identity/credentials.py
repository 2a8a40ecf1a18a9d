"""Bearer credentials to Principals: one static table keyed by token prefix.

``svck_`` tokens are API keys (services/identity/keys.py), ``svco_`` OAuth access tokens
(services/oauth/tokens.py); anything else is tried as a session JWT (services/identity/auth.py).
The table is plain data built from the resolvers' modules: nothing registers itself
at import time, so every kind resolves however the process was started.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from services.identity import auth, keys
from services.oauth import tokens as oauth
from services.platform import errors
from services.platform.principal import Principal, require_enabled

# token -> Principal; raises errors.InvalidToken when the token is not valid.
CredentialResolver = Callable[[str], Principal]

RESOLVERS_BY_PREFIX: tuple[tuple[str, CredentialResolver], ...] = (
    (keys.SECRET_PREFIX, keys.resolve),
    (oauth.ACCESS_TOKEN_PREFIX, oauth.resolve),
)
SESSION_RESOLVER: CredentialResolver = auth.resolve_session


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


def resolve_token(token: str, generation: Any = None) -> Principal:
    """The Principal for a bearer token; InvalidToken (401) when it is not valid.

    ``generation``: the credential generation read from Redis for this request, which lets
    an API key verified under it a moment ago be used without reading it again."""
    if token.startswith(keys.SECRET_PREFIX):
        principal = keys.resolve(token, generation)
    else:
        resolver = next((resolver for prefix, resolver in RESOLVERS_BY_PREFIX
                         if token.startswith(prefix)), SESSION_RESOLVER)
        principal = resolver(token)
    require_enabled(principal.user)
    return principal


def resolve(authorization: str | None, generation: Any = None) -> Principal:
    """The Principal for an Authorization header: 401 unauthorized or invalid_token otherwise."""
    return resolve_token(bearer_token(authorization), generation)
