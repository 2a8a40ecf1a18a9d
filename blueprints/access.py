"""Route access policies: declared next to each route, enforced in one place, documented.

Every ``/api`` route declares one policy with a decorator::

    @access.public                   # no credential
    @access.jwt_only                 # a session JWT; API keys and OAuth tokens refused (403)
    @access.api_credential_only      # an API key or OAuth token; a session JWT refused (401)
    @access.requires("read:trades")  # a session JWT, or a key/token holding the scope

The decorators only mark the view (and write its OpenAPI ``security`` and
description); ``init_app`` installs the one before-request gate that resolves
the credential (services/identity/credentials.py) and applies the policy. Deny by default:
an ``/api`` route without a policy refuses every request (403), and a test walks
the URL map so none ships. Views read the caller with ``current_principal()``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from flask import Flask, Response, current_app, g, request

from blueprints import ratelimit
from config import TierSettings
from schemas.vocabulary import ALL_SCOPES
from services.identity import credentials
from services.oauth import resources as oauth_resources
from services.platform import errors
from services.platform.principal import Principal

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
PolicyKind = Literal["public", "session", "api_credential", "scope"]

API_PREFIX = "/api"
# Routes outside /api that the gate guards all the same: the MCP read-only endpoint's
# outside name (shared ARCHITECTURE.md), the same view as /api/mcp/readonly.
GATED_OUTSIDE_API = frozenset({oauth_resources.MCP_READONLY_ALIAS})
_DECLARED = "access_declared_endpoints"


@dataclass(frozen=True)
class Policy:
    """Who may call a route."""

    kind: PolicyKind
    scope: str | None = None

    def security(self) -> list[dict[str, list[str]]]:
        """The OpenAPI ``security`` requirement for this policy."""
        if self.kind == "public":
            return []
        if self.kind == "session":
            return [{"sessionJWT": []}]
        if self.kind == "api_credential":
            return [{"apiKey": []}, {"oauth": []}]
        return [{"sessionJWT": []}, {"apiKey": [self.scope or ""]}, {"oauth": [self.scope or ""]}]

    def describe(self) -> str:
        """One sentence for the operation's description."""
        if self.kind == "public":
            return "**Auth:** none (public)."
        if self.kind == "session":
            return ("**Auth:** session JWT only; API keys and OAuth tokens are refused "
                    "(403 `scope_required`).")
        if self.kind == "api_credential":
            return ("**Auth:** API key or OAuth token only; a session JWT is refused "
                    "(401 `invalid_token`).")
        return (f"**Auth:** session JWT, or an API key / OAuth token with scope "
                f"`{self.scope}` (403 `scope_required` without it).")


def add_doc(func: Any, fragment: dict[str, Any]) -> None:
    """Attach an OpenAPI fragment our Blueprint merges in (see blueprints/api/base.py)."""
    apidoc = deepcopy(getattr(func, "_apidoc", {}))
    apidoc.setdefault("extra_doc", []).append(fragment)
    func._apidoc = apidoc


def _declare(policy: Policy) -> Callable[[F], F]:
    def decorator(func: F) -> F:
        func._access_policy = policy  # type: ignore[attr-defined]
        extension: dict[str, Any] = {"policy": policy.kind}
        if policy.scope:
            extension["scope"] = policy.scope
        add_doc(func, {"security": policy.security(), "notes": [policy.describe()],
                       "extensions": {"x-access": extension}})
        return func

    return decorator


def public(func: F) -> F:
    """Declare a route open to anyone (no credential read)."""
    return _declare(Policy("public"))(func)


def jwt_only(func: F) -> F:
    """Declare a route for session JWTs only (e.g. /api/keys)."""
    return _declare(Policy("session"))(func)


def api_credential_only(func: F) -> F:
    """Declare a route for API keys and OAuth tokens only (e.g. /api/mcp)."""
    return _declare(Policy("api_credential"))(func)


def requires(scope: str) -> Callable[[F], F]:
    """Declare a route for a session JWT or a key/token holding ``scope``."""
    if scope not in ALL_SCOPES:
        raise ValueError(f"unknown scope {scope!r}; known: {sorted(ALL_SCOPES)}")
    return _declare(Policy("scope", scope))


def declare(app: Flask, endpoint: str, policy: Policy) -> None:
    """Give a view we do not decorate (a library's, e.g. the API explorer) a policy."""
    app.extensions.setdefault(_DECLARED, {})[endpoint] = policy


def policy_for(app: Flask, endpoint: str, method: str) -> Policy | None:
    """The policy declared for ``endpoint`` answering ``method``; None when undeclared."""
    declared = app.extensions.get(_DECLARED, {}).get(endpoint)
    if declared is not None:
        return declared
    view = app.view_functions.get(endpoint)
    if view is None:
        return None
    view_class = getattr(view, "view_class", None)
    if view_class is not None:
        handler = getattr(view_class, method.lower(), None)
        if handler is None and method.upper() == "HEAD":
            handler = getattr(view_class, "get", None)
        return getattr(handler, "_access_policy", None) if handler else None
    return getattr(view, "_access_policy", None)


def current_principal() -> Principal:
    """The caller of this request (routes with a non-public policy always have one)."""
    principal = g.get("principal")
    if principal is None:
        raise errors.Unauthorized()
    return principal


def _challenge(err: errors.Unauthorized) -> errors.Unauthorized:
    # RFC 6750: tell clients (and OAuth-aware MCP clients) how to authenticate.
    value = 'Bearer realm="copytrade"'
    if isinstance(err, errors.InvalidToken):
        value += ', error="invalid_token"'
    err.headers.setdefault("WWW-Authenticate", value)
    return err


def point_to_resource_metadata(response: Response) -> Response:
    """Give every REST 401 a challenge naming the REST resource's OAuth metadata (RFC 9728 §5).

    A client that starts at ``/api/...`` learns where ``<BASE_URL>/api``'s metadata lives,
    and from it the authorization server. ``/api/mcp`` sets its own (blueprints/mcp).
    """
    api = oauth_resources.api_resource()
    if response.status_code != 401 or oauth_resources.resource_for_path(request.path) != api:
        return response
    metadata = oauth_resources.metadata_url(api)
    value = f'Bearer realm="copytrade", resource_metadata="{metadata}"'
    body = response.get_json(silent=True) if response.is_json else None
    if isinstance(body, dict) and body.get("code") == "invalid_token":
        value += ', error="invalid_token"'
    response.headers["WWW-Authenticate"] = value
    return response


def enforce() -> None:
    """The gate: resolve the credential and apply the route's policy (deny by default)."""
    current = request._get_current_object()  # type: ignore[attr-defined]  # one lookup
    rule = current.url_rule
    if rule is None or current.method == "OPTIONS" or not (
            rule.rule == API_PREFIX or rule.rule.startswith(API_PREFIX + "/")
            or rule.rule in GATED_OUTSIDE_API):
        return
    policy = policy_for(current_app, current.endpoint or "", current.method)
    if policy is None:
        log.error("refusing %s %s: the route declares no access policy", current.method,
                  rule.rule)
        raise errors.Forbidden("This route declares no access policy and refuses every request.")
    if policy.kind == "public":
        return
    try:
        principal = credentials.resolve(current.headers.get("Authorization"),
                                        ratelimit.credential_generation_seen())
    except errors.Unauthorized as err:
        raise _challenge(err) from None
    g.principal = principal
    if policy.kind == "session":
        principal.require_session()
    elif policy.kind == "api_credential":
        try:
            principal.require_api_credential()
        except errors.Unauthorized as err:
            raise _challenge(err) from None
    else:
        principal.require_scope(policy.scope or "")


def init_app(app: Flask) -> None:
    """Install the gate and give the API explorer's own views their public policy."""
    for endpoint in ("api-docs.openapi_json", "api-docs.openapi_swagger_ui",
                     "assets.swagger_asset"):
        declare(app, endpoint, Policy("public"))
    app.before_request(enforce)
    app.after_request(point_to_resource_metadata)


def openapi_notes(plans: TierSettings) -> str:
    """The authentication, tier, rate-limit and idempotency rules for the OpenAPI description."""

    def shown(limit: int | None) -> str:
        return "unlimited" if limit is None else str(limit)

    tier_rows = "\n".join(
        f"| `{tier}`{' (default)' if tier == plans.default else ''} | "
        f"{shown(row.max_active_configs)} | {shown(row.max_api_keys)} |"
        for tier, row in plans.table.items())
    return f"""
## Authentication
Send `Authorization: Bearer <token>`. Sign in with `POST /api/auth/magic` `{{email}}`
(a 6-digit code and a one-time link are emailed; 202 whether or not the address is
known) then `POST /api/auth/verify-code` `{{email, code}}`, or redeem the link's token at
`POST /api/auth/magic` `{{token}}`: both answer a session JWT (24 hours, full account
scope). Wrong codes are budgeted across codes (10 an hour lock the address, 50 the client
IP: 429 `rate_limited` with Retry-After), in the database, so Redis being down does not
lift them. `POST /api/auth/sign-out` ends a session; `POST /api/auth/sign-out-everywhere`
ends all of the account's. A session withdraws or mints a `wallet:write` key only with a
step-up token (`POST /api/auth/step-up`, 5 minutes) in `X-Step-Up-Token`: without one,
403 `scope_required`. API keys (`svck_live_...`, `POST /api/keys`) and OAuth tokens
(`svco_...`) carry scopes. Each operation's `security` and description state its policy.
A missing credential answers 401 `unauthorized`; a bad, revoked or expired one, or any
credential of an account the operator disabled, 401 `invalid_token`; a credential without
the operation's scope 403 `scope_required`.

## Tiers
Each account is on a tier; `GET /api/users/me` shows it and its limits (null: unlimited).
New accounts start on the default tier; the operator configures the table and moves
accounts between tiers (`copytrade users set-tier`). Exceeding a limit answers 403
`tier_limit_exceeded`. This server's tiers:

| tier | active copy configs | active API keys |
|---|---|---|
{tier_rows}

## Rate limits
Per client IP, a token bucket: 60 requests per second sustained, bursts up to 500
(operators may change both). Every response carries `X-RateLimit-Limit` (bucket
capacity), `X-RateLimit-Remaining` and `X-RateLimit-Reset` (Unix time the bucket is full
again). Past the burst, requests get 429 `rate_limited` with `Retry-After` (seconds)
and are admitted again at the sustained rate.

## Idempotency
State-changing operations accept `Idempotency-Key` (a UUID, scoped to the user, kept 24
hours in the database). A replay returns the first status and body with
`Idempotent-Replay: true`; a duplicate while the first still runs gets 409 with
`Retry-After`; the same key with a different request gets 400 `bad_request`; when the
idempotency store is down keyed requests get 503 `cache_error` and are not run.
"""
