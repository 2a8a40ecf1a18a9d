"""The /.well-known documents: OAuth discovery (RFC 8414, RFC 9728); others add theirs here.

``/.well-known/oauth-authorization-server`` describes the authorization server;
``/.well-known/oauth-protected-resource`` (and its path-inserted twin
``/.well-known/oauth-protected-resource/api/mcp``) the MCP server as a protected
resource, ``/.well-known/oauth-protected-resource/api`` the REST API. Every
document here is public, cacheable and CORS-readable from any origin: add a
route to ``blp`` and it gets the same headers.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, jsonify

from blueprints import access
from blueprints.api.base import Blueprint
from services.oauth import resources as oauth_resources
from services.oauth import server as oauth_server

blp = Blueprint("wellknown", __name__, url_prefix="/.well-known",
                description="Discovery documents (public, CORS-readable)")

CACHE_SECONDS = 300


@blp.after_request
def _public_headers(response: Response) -> Response:
    response.headers["Access-Control-Allow-Origin"] = "*"
    response.headers["Access-Control-Allow-Methods"] = "GET, OPTIONS"
    response.headers["Access-Control-Allow-Headers"] = "MCP-Protocol-Version, Content-Type"
    response.headers.setdefault("Cache-Control", f"public, max-age={CACHE_SECONDS}")
    return response


def _document(description: str) -> dict[str, Any]:
    return {"summary": description, "responses": {
        "200": {"description": description,
                "content": {"application/json": {"schema": {"type": "object"}}}},
        "429": {"description": "Rate limited (`rate_limited`)."}}}


@blp.route("/oauth-authorization-server", methods=["GET"])
@access.public
@blp.doc(**_document("OAuth 2.0 authorization server metadata (RFC 8414)"))
def authorization_server() -> Response:
    """Issuer, endpoints, S256 PKCE, grant and response types, scopes, auth methods."""
    return jsonify(oauth_server.authorization_server_metadata())


@blp.route("/oauth-protected-resource", methods=["GET"])
@blp.route("/oauth-protected-resource/api/mcp", methods=["GET"])
@access.public
@blp.doc(**_document("Protected resource metadata of the MCP server (RFC 9728)"))
def mcp_resource() -> Response:
    """The MCP server (``<BASE_URL>/api/mcp``) as an OAuth protected resource."""
    return jsonify(oauth_resources.protected_resource_metadata(oauth_resources.mcp_resource()))


@blp.route("/oauth-protected-resource/api", methods=["GET"])
@access.public
@blp.doc(**_document("Protected resource metadata of the REST API (RFC 9728)"))
def api_resource() -> Response:
    """The REST API (``<BASE_URL>/api``) as an OAuth protected resource."""
    return jsonify(oauth_resources.protected_resource_metadata(oauth_resources.api_resource()))


def register(app: Flask) -> None:
    """Add the /.well-known documents to the app's API (so OpenAPI lists them)."""
    app.extensions["copytrade_api"].register_blueprint(blp)
