"""The OAuth 2.1 surface: /oauth endpoints, /api/oauth/approvals, the resource hook.

``register(app)`` builds the authorization server, adds the routes, and binds
each request to the protected resource it targets (services/oauth/resources.py)
so the ``svco_`` resolver can refuse tokens issued for another resource. Users sign
in on the dashboard (blueprints/dashboard), whose browser session the consent page
reads; the dashboard's ``register`` sets the session cookie's flags.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, request

from blueprints.oauth import approvals, endpoints, server
from services.oauth import resources as oauth_resources
from services.oauth import tokens as oauth  # noqa: F401 - importing it registers svco_

OPENAPI_NOTES = """
## OAuth 2.1 for hosted agents
Discovery: `/.well-known/oauth-authorization-server` (RFC 8414) and
`/.well-known/oauth-protected-resource` (RFC 9728; also at
`/.well-known/oauth-protected-resource/api/mcp`, and `/.well-known/oauth-protected-resource/api`
for the REST API). Endpoints: `/oauth/authorize` (consent page; a signed-out user signs in
on the dashboard's `/dashboard/login` first and comes back),
`/oauth/token`, `/oauth/register` (RFC 7591, open), `/oauth/revoke` (RFC 7009).
Authorization code with PKCE, S256 only and required. Public clients
(`token_endpoint_auth_method: none`) and Client ID Metadata Documents (an https
`client_id` whose JSON document is fetched) are supported. Redirect URIs match exactly;
the redirect carries `iss` (RFC 9207).

Resources (RFC 8707): a token is bound to one resource and refused elsewhere (401
`invalid_token`): `<BASE_URL>/api/mcp` (the MCP server, the default) or `<BASE_URL>/api`
(every other REST route). Access tokens `svco_...` live 1 hour and carry the scopes the
user approved; refresh tokens `svcr_...` live 30 days and rotate on every use (a reused
one revokes the whole family). Codes live 5 minutes and work once. Users list and revoke
approvals at `/api/oauth/approvals` (revoking one revokes its tokens).

The `/oauth/...` endpoints answer OAuth's error format `{error, error_description}` (RFC
6749 5.2: `invalid_request`, `invalid_client`, `invalid_grant`, `unauthorized_client`,
`unsupported_grant_type`, `invalid_scope`, `invalid_target`, `invalid_redirect_uri`,
`invalid_client_metadata`), not the `{error, code}` shape of `/api`.
"""


def _bind_resource(endpoint: str | None, values: dict[str, Any] | None) -> None:
    # Runs before every before_request hook (the /api gate resolves credentials there).
    oauth_resources.request_resource.set(
        oauth_resources.resource_for_path(request.path))


def _unbind_resource(exc: BaseException | None) -> None:
    oauth_resources.request_resource.set(None)


def register(app: Flask) -> None:
    """Build the authorization server and register the OAuth routes on ``app``."""
    server.init_app(app)
    app.url_value_preprocessor(_bind_resource)
    app.teardown_request(_unbind_resource)
    api = app.extensions["copytrade_api"]
    api.register_blueprint(endpoints.blp)
    api.register_blueprint(approvals.blp)
    info = api.spec.options.setdefault("info", {})
    info["description"] = info.get("description", "") + OPENAPI_NOTES
