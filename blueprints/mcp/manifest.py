"""The MCP manifest (/.well-known/mcp.json, also the server card): how to connect, who may.

Everything in it is derived: the endpoint from BASE_URL, the versions from protocol.py,
the scopes from the one scope list, the tools (names, titles, scopes, annotations) from
the tool table. The tool list is informative only; ``tools/list`` on the endpoint is
authoritative and filtered by the caller's scopes.
"""

from __future__ import annotations

from typing import Any

from blueprints.mcp import protocol
from blueprints.mcp.tools import TOOLS
from blueprints.mcp.transport import INSTRUCTIONS, resource_metadata_url, server_info
from schemas.vocabulary import SCOPES
from services.platform.runtime import runtime

SCOPE_GRANTS = {
    "read:account": "Profile, balance, PnL summary, copy configs and their PnL",
    "read:positions": "Open and paper positions",
    "read:trades": "Trade history and fills, copy-config decisions",
    "read:markets": "Market search, depth, history, open orders, leaderboard data",
    "trade:execute": "Place orders; preview, create, start, stop and delete copy configs",
    "trade:cancel": "Cancel resting order-book orders",
    "wallet:write": "Claim resolved positions, withdraw, wrap to pUSD",
}
RECOMMENDED_SCOPES = ("read:account", "read:positions", "read:trades", "read:markets",
                      "trade:execute", "trade:cancel")
CORS_HEADERS = {"Access-Control-Allow-Origin": "*",
                "Access-Control-Allow-Methods": "GET, OPTIONS",
                "Access-Control-Allow-Headers": "Content-Type"}


def manifest() -> dict[str, Any]:
    """The manifest document for this deployment."""
    base = runtime().settings.base_url
    info = server_info()
    endpoint = f"{base}/api/mcp"
    return {
        "name": info["name"],
        "title": info["title"],
        "version": info["version"],
        "description": ("Copy trading on Polymarket: read markets, positions, trades and PnL; "
                        "preview and place orders; preview, create, start and stop copy "
                        "configs (paper or live); claim resolved positions."),
        "instructions": INSTRUCTIONS,
        "endpoint": {"url": endpoint, "transport": "streamable-http",
                     "methods": ["POST"], "response_content_type": "application/json"},
        "remotes": [{"type": "streamable-http", "url": endpoint}],
        "protocol_versions": list(protocol.SUPPORTED_VERSIONS),
        "capabilities": {"tools": {"listChanged": False}},
        "authentication": {
            "required": True,
            "scheme": "bearer",
            "accepted_credentials": [
                {"kind": "api_key", "token_prefix": "svck_",
                 "obtain": f"{base}/dashboard/keys (or POST {base}/api/keys)"},
                {"kind": "oauth", "token_prefix": "svco_",
                 "obtain": "OAuth 2.1 authorization code with PKCE; see the discovery "
                           "documents"},
            ],
            "refused_credentials": ["session JWT (use an API key or an OAuth token)"],
            "oauth": {
                "protected_resource_metadata": resource_metadata_url(),
                "authorization_server_metadata":
                    f"{base}/.well-known/oauth-authorization-server",
                "resource": endpoint,
            },
            "scopes": [{"name": scope, "grants": SCOPE_GRANTS[scope]} for scope in SCOPES],
            "recommended_scopes": list(RECOMMENDED_SCOPES),
            "advice": ("Grant the fewest scopes: a monitoring agent needs no trade:execute; "
                       "a copy-trading agent needs no wallet:write."),
        },
        "documentation": {
            "openapi": f"{base}/openapi.json",
            "explorer": f"{base}/api/docs",
            "manifest": f"{base}/.well-known/mcp.json",
            "server_card": f"{base}/api/mcp/server-card",
        },
        "tools_authoritative": False,
        "tools": [
            {"name": tool.name, "title": tool.title, "scope": tool.scope,
             "read_only": tool.annotations.read_only,
             "requires_idempotency_key": tool.is_write}
            for tool in TOOLS],
    }
