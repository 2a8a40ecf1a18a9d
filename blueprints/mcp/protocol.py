"""MCP protocol constants: the versions we speak, header and _meta names, JSON-RPC error codes.

Two eras share one endpoint (see the spec's versioning page):

- **legacy** (2025-06-18, 2025-11-25): an ``initialize`` handshake negotiates the version;
  later requests carry it in ``MCP-Protocol-Version``.
- **modern** (2026-07-28): no handshake; every request carries its version and client
  capabilities in ``params._meta`` and mirrors method and name into ``Mcp-Method`` and
  ``Mcp-Name`` headers. ``server/discover`` advertises what we speak.
"""

from __future__ import annotations

from typing import Any

LEGACY_VERSIONS: tuple[str, ...] = ("2025-06-18", "2025-11-25")
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
SUPPORTED_VERSIONS: tuple[str, ...] = LEGACY_VERSIONS + MODERN_VERSIONS
LATEST_LEGACY = LEGACY_VERSIONS[-1]
# A legacy request without MCP-Protocol-Version (and no session naming one) is served as
# this version: the spec's default, 2025-03-26, predates structured tool output, which
# every tool here returns, so the oldest version we speak is the honest reading.
DEFAULT_LEGACY = LEGACY_VERSIONS[0]

# HTTP headers (matched case-insensitively by werkzeug).
VERSION_HEADER = "MCP-Protocol-Version"
SESSION_HEADER = "Mcp-Session-Id"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"

# Reserved _meta keys of the 2026-07-28 per-request envelope.
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
# On every frame of a subscriptions/listen stream: the listen request's JSON-RPC id.
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
# Ours: set on a tool result that is the saved answer of an earlier call with the same
# idempotency_key (the write did not run again).
META_REPLAY = "com.copytrade/idempotentReplay"

# Methods whose params name a target mirrored into Mcp-Name.
NAME_BEARING = {"tools/call": "name", "resources/read": "uri", "prompts/get": "name"}

# JSON-RPC 2.0 and MCP error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022
# Application-defined (outside the JSON-RPC reserved range): the credential lacks the
# tool's scope. Sent with HTTP 403 and an RFC 6750 insufficient_scope challenge.
SCOPE_REQUIRED = -31403
# Application-defined: this web process already holds MCP_LISTEN_STREAMS listen streams,
# or the caller MCP_LISTEN_STREAMS_PER_USER of them.
# Sent with HTTP 429, Retry-After and the REST ``rate_limited`` body as ``data``.
LISTEN_BUSY = -31429


class JsonRpcError(Exception):
    """A JSON-RPC error response to send, with the HTTP status it travels with."""

    def __init__(self, code: int, message: str, *, status: int = 200, data: Any = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.data = data
        self.headers = dict(headers or {})

    def body(self, request_id: Any) -> dict[str, Any]:
        """The JSON-RPC error response object (``id`` null when it could not be read)."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return {"jsonrpc": "2.0", "id": request_id, "error": error}


def unsupported_version(requested: Any) -> JsonRpcError:
    """400 UnsupportedProtocolVersion naming every version we speak."""
    return JsonRpcError(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"Unsupported protocol version {requested!r}; this server speaks "
        f"{', '.join(SUPPORTED_VERSIONS)}.",
        status=400, data={"supported": list(SUPPORTED_VERSIONS), "requested": requested})
