"""RFC 8707 resource indicators and RFC 9728 protected-resource metadata: the one place.

authlib has neither, so this small module holds both. Two protected resources
exist, each with its own audience:

- the MCP server, ``<BASE_URL>/api/mcp`` (the default when a client names none);
- the REST API, ``<BASE_URL>/api`` (every ``/api`` route except ``/api/mcp``).

A code and the tokens issued from it are bound to exactly one of them. A token
is accepted only by its own resource: an MCP token is refused (401
``invalid_token``) on REST routes and a REST token on ``/api/mcp``. The web
layer tells the credential resolver which resource a request targets through
``request_resource`` (set per request by blueprints/oauth); without it, OAuth
tokens are refused (fail closed).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from authlib.oauth2.rfc6749 import OAuth2Error

from schemas.keys import SCOPES
from services.platform.runtime import runtime

MCP_PATH = "/api/mcp"
MCP_READONLY_ALIAS = "/mcp/readonly"  # the read-only endpoint's outside name
API_PATH = "/api"
PROTECTED_RESOURCE_WELL_KNOWN = "/.well-known/oauth-protected-resource"

# The resource the current request targets (a canonical URL), or None outside /api.
request_resource: ContextVar[str | None] = ContextVar("oauth_request_resource", default=None)


class InvalidTargetError(OAuth2Error):
    """RFC 8707 section 2: the requested resource is unknown, malformed or not allowed."""

    error = "invalid_target"
    description = "The requested resource is invalid, unknown, or malformed."


def _base() -> str:
    return runtime().settings.base_url


def mcp_resource() -> str:
    """The MCP server's resource identifier, ``<BASE_URL>/api/mcp``."""
    return canonical(_base() + MCP_PATH)


def api_resource() -> str:
    """The REST API's resource identifier, ``<BASE_URL>/api``."""
    return canonical(_base() + API_PATH)


def resources() -> tuple[str, str]:
    """Every resource this server protects, the default (MCP) first."""
    return mcp_resource(), api_resource()


def canonical(value: str) -> str:
    """A resource URI compared as RFC 8707 asks: lower-case scheme and host, no trailing slash."""
    parts = urlsplit(value.strip())
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def select(values: Sequence[str]) -> str:
    """The one resource an authorization request names (the MCP server when it names none)."""
    if not values:
        return mcp_resource()
    if len(values) > 1:
        raise InvalidTargetError("Request one resource per authorization.")
    value = values[0]
    parts = urlsplit(value)
    if not parts.scheme or not parts.netloc or parts.fragment:
        raise InvalidTargetError("The resource must be an absolute URI without a fragment.")
    resource = canonical(value)
    if resource not in resources():
        raise InvalidTargetError(
            f"Unknown resource; this server protects {', '.join(resources())}.")
    return resource


def check_token_request(values: Sequence[str], bound: str) -> None:
    """At the token endpoint a ``resource``, when sent, must be the one the grant is bound to."""
    if not values:
        return
    if len(values) > 1 or canonical(values[0]) != bound:
        raise InvalidTargetError("The resource does not match the one this grant was issued for.")


def resource_for_path(path: str) -> str | None:
    """Which protected resource a request path belongs to; None outside /api."""
    if path in (MCP_PATH, MCP_READONLY_ALIAS) or path.startswith(MCP_PATH + "/"):
        return mcp_resource()
    if path == API_PATH or path.startswith(API_PATH + "/"):
        return api_resource()
    return None


def metadata_url(resource: str) -> str:
    """Where RFC 9728 metadata for ``resource`` is published (path-inserted well-known URL)."""
    path = urlsplit(resource).path
    return _base() + PROTECTED_RESOURCE_WELL_KNOWN + path


def protected_resource_metadata(resource: str) -> dict[str, Any]:
    """The RFC 9728 document for one of our resources."""
    base = _base()
    name = "copytrade MCP server" if resource == mcp_resource() else "copytrade REST API"
    return {
        "resource": resource,
        "authorization_servers": [base],
        "scopes_supported": list(SCOPES),
        "bearer_methods_supported": ["header"],
        "resource_name": name,
        "resource_documentation": f"{base}/api/docs",
    }


def challenge(resource: str | None = None) -> str:
    """A ``WWW-Authenticate`` value pointing OAuth clients at the resource's metadata."""
    target = resource or mcp_resource()
    return f'Bearer resource_metadata="{metadata_url(target)}"'
