"""Who is calling: the Principal a resolved credential gives, and the user-id helper.

The conventions every service follows:

- Scopes are declared by the surface (``@access.requires`` on a REST route, ``scope`` on
  an MCP tool) and enforced by that surface's one gate (``blueprints/access.py``,
  ``blueprints/mcp/runner.py``). Services do not re-check them.
- Services take the user they act for (``User`` or its id, read with ``user_id_of``).
  Only rules about the credential itself take the Principal: managing API keys and
  OAuth approvals needs a session (``require_session``).

A leaf: it imports models, the vocabulary and the error tree, nothing that resolves
credentials (services/identity/credentials.py does that) and nothing about Flask.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from uuid import UUID

from models import User
from schemas.vocabulary import ALL_SCOPES
from services.platform import errors

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


def user_id_of(user: User | UUID | str) -> UUID:
    """The id of a user given as a User row or an id (UUID or its text)."""
    return user.id if isinstance(user, User) else UUID(str(user))


def require_enabled(user: User) -> None:
    """Raise InvalidToken (401) when the operator disabled ``user``'s account.

    The one disabled-account check: every credential passes through
    ``credentials.resolve_token``; sign-in (services/identity/auth.py) calls it before issuing a
    session, and configs.start under the user-row lock (a start racing the disable).
    """
    if user.disabled_at is not None:
        raise errors.InvalidToken("This account is disabled; ask the operator.")
