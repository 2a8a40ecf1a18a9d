"""The MCP server: POST /api/mcp, the manifest at /.well-known/mcp.json and the server card.

``init_app(app)`` (after the REST Api exists) registers the endpoint on the Api so the
OpenAPI document describes it, installs the Origin guard ahead of every other
before-request hook, and builds the tool catalogue once. The manifest route sits on the
/.well-known blueprint (blueprints/wellknown.py) beside the OAuth discovery documents.
The transport is ``transport.py``, the tool table ``tools.py``.
"""

from __future__ import annotations

from flask import Flask, Response, jsonify, request
from flask.views import MethodView

from blueprints import access
from blueprints import wellknown as wellknown_documents
from blueprints.api.base import Blueprint
from blueprints.idempotency import idempotency_exempt
from blueprints.mcp import manifest as manifest_doc
from blueprints.mcp import transport
from blueprints.mcp.catalogue import catalogue
from schemas import request_examples
from schemas.jsonrpc import JsonRpcRequestSchema, JsonRpcResponseSchema
from services.oauth import resources as oauth_resources

ENDPOINT = "/api/mcp"
READONLY_ENDPOINT = ENDPOINT + "/readonly"
# The read-only endpoint's outside name (shared ARCHITECTURE.md), served beside the /api one.
READONLY_ALIAS = oauth_resources.MCP_READONLY_ALIAS

blp = Blueprint("mcp", __name__, url_prefix=ENDPOINT, description="MCP server")

_ENDPOINT_DOC = """\
JSON-RPC 2.0 over the MCP Streamable HTTP transport, protocol versions 2025-06-18 and
2025-11-25 (`initialize` handshake, `MCP-Protocol-Version`, optional `Mcp-Session-Id`)
and 2026-07-28 (stateless: `params._meta` version and capabilities, `server/discover`,
`Mcp-Method` / `Mcp-Name` headers). One message per POST (arrays are refused);
answers are `application/json`, except `subscriptions/listen` (2026-07-28), answered with a
`text/event-stream` of the caller's new notifications (`read:account`; resource
`copytrade://notifications`; at most `MCP_LISTEN_STREAMS` per web process and
`MCP_LISTEN_STREAMS_PER_USER` of those per user: beyond, 429 with
JSON-RPC error -31429, `Retry-After` and the `rate_limited` body as `data`);
notifications get 202. GET and DELETE answer 405.

`tools/list` lists only the tools the credential's scopes permit. A tool call without
its scope answers 403 with `WWW-Authenticate: Bearer error="insufficient_scope"`. Write
tools require an `idempotency_key` argument (the store behind REST's Idempotency-Key;
refused when it is down); `place_market_order` and `create_copy_config` require a
`preview_id`. Tool failures are results with `isError: true` and `{error, code}`. The
manifest is at `/.well-known/mcp.json`.

Money-moving calls (`place_market_order`, `create_copy_config` and `start_copying` for a
live config, `update_copy_config` raising a limit, `claim_positions`) wait for a person
unless the key's or app's owner turned that off: a 2026-07-28 client that declared
elicitation gets `resultType: input_required` with an `elicitation/create` form and a
signed `requestState`; a 2025-11-25 session whose client declared elicitation at
`initialize` gets a `text/event-stream` carrying the server request `elicitation/create`
(id `confirm-<id>`): POST its result as a JSON-RPC response on the session (202) and the
stream then carries the call's result (declined, cancelled or unanswered within the
confirmation's 15 minutes: an `isError` result, nothing sent). Any other client gets an
`isError` result (`validation_failed` naming `confirmation_code`) whose `confirmation`
holds the code to pass back. Tasks: on 2025-11-25, a `tools/call` with `task`
answers `{task}` (`tasks/get`, `tasks/list`, `tasks/result`, `tasks/cancel`); on
2026-07-28, a request whose client capabilities list the extension
`io.modelcontextprotocol/tasks` gets, for a money tool that ran, a task with
`resultType: task` (`tasks/get`, with `result` once completed; `tasks/cancel`). A
read-only endpoint is at `/mcp/readonly` (and `/api/mcp/readonly`).
"""


@blp.route("")
class McpEndpoint(MethodView):
    @access.api_credential_only
    @idempotency_exempt("each MCP write tool takes its own `idempotency_key` argument, run "
                        "through the same store as Idempotency-Key.")
    @blp.doc(summary="MCP endpoint (Streamable HTTP)", description=_ENDPOINT_DOC,
             requestBody={"required": True,
                          "content": {"application/json": {"schema": JsonRpcRequestSchema,
                                                           "example": request_examples.JSON_RPC}}})
    @blp.alt_response(200, schema=JsonRpcResponseSchema,
                      description="A JSON-RPC response (legacy-era JSON-RPC errors too).")
    @blp.alt_response(202, description="A notification was accepted (no body).")
    @blp.alt_response(400, schema=JsonRpcResponseSchema, description=(
        "JSON-RPC error: not JSON (-32700), not one JSON-RPC message or a batch (-32600), "
        "unsupported MCP-Protocol-Version (-32022), on 2026-07-28 missing `_meta` fields "
        "or bad params (-32602) and headers not matching the body (-32020)."))
    @blp.alt_response(403, schema=JsonRpcResponseSchema, description=(
        "JSON-RPC error: a foreign `Origin` (-32600), or a tool needing a scope the "
        "credential lacks (-31403, with `WWW-Authenticate: Bearer "
        "error=\"insufficient_scope\", scope=\"...\"`)."))
    @blp.alt_response(404, schema=JsonRpcResponseSchema, description=(
        "JSON-RPC error: unknown method on 2026-07-28 (-32601), or an unknown or expired "
        "Mcp-Session-Id (initialize again)."))
    @blp.errors(401, 429)
    def post(self):
        return transport.handle()


@blp.route("/readonly")
class ReadOnlyEndpoint(MethodView):
    @access.api_credential_only
    @idempotency_exempt("the read-only endpoint serves no write tool.")
    @blp.doc(summary="Read-only MCP endpoint", description=(
        "The MCP endpoint for agents that only watch, also served at `/mcp/readonly`: the "
        "same protocol as `/api/mcp`, "
        "but `tools/list` lists read tools only and a `tools/call` of any other tool "
        "answers -32602 `Unknown tool`, whatever scopes the credential holds. OAuth tokens "
        "for `/api/mcp` are accepted here."),
        requestBody={"required": True,
                     "content": {"application/json": {"schema": JsonRpcRequestSchema,
                                                           "example": request_examples.JSON_RPC}}})
    @blp.alt_response(200, schema=JsonRpcResponseSchema, description="A JSON-RPC response.")
    @blp.alt_response(202, description="A notification was accepted (no body).")
    @blp.alt_response(400, schema=JsonRpcResponseSchema,
                      description="JSON-RPC error, as on `/api/mcp`.")
    @blp.alt_response(403, schema=JsonRpcResponseSchema,
                      description="A foreign `Origin`, or a read tool needing a missing scope.")
    @blp.alt_response(404, schema=JsonRpcResponseSchema,
                      description="Unknown method (2026-07-28) or Mcp-Session-Id.")
    @blp.errors(401, 429)
    def post(self):
        return transport.handle(readonly=True)


@blp.route("/server-card")
class ServerCard(MethodView):
    @access.public
    @blp.doc(summary="MCP server card",
             description="The MCP manifest (same document as /.well-known/mcp.json).")
    @blp.alt_response(200, description="The manifest.")
    @blp.errors(429)
    def get(self):
        return _manifest_response()


# Beside the OAuth discovery documents, on their blueprint: public, cached, CORS-readable.
@wellknown_documents.blp.route("/mcp.json", methods=["GET"])
@access.public
@wellknown_documents.blp.doc(summary="MCP manifest", description=(
    "Endpoint, transport, protocol versions, authentication (OAuth discovery URLs, token "
    "prefixes, scopes, recommended scopes), documentation links and a non-authoritative "
    "list of tools with their scopes."), responses={
    "200": {"description": "The manifest.",
            "content": {"application/json": {"schema": {"type": "object"}}}},
    "429": {"description": "Rate limited (`rate_limited`)."}})
def well_known_manifest() -> Response:
    """The MCP manifest: endpoint, transport, versions, auth and scopes, tools."""
    return _manifest_response()


def _manifest_response() -> Response:
    response = jsonify(manifest_doc.manifest())
    response.headers["Cache-Control"] = "public, max-age=300"
    return response


@blp.after_request
def _challenge(response: Response) -> Response:
    if request.endpoint == "mcp.ServerCard":
        response.headers.update(manifest_doc.CORS_HEADERS)
    return transport.challenge_unauthorized(response)


def _origin_guard() -> Response | None:
    if request.path.rstrip("/") not in (ENDPOINT, READONLY_ENDPOINT, READONLY_ALIAS):
        return None
    return transport.origin_refusal()


def init_app(app: Flask) -> None:
    """Register the MCP routes on the app's REST Api and guard the endpoint's Origin."""
    api = app.extensions["copytrade_api"]
    api.register_blueprint(blp)  # /.well-known/mcp.json comes with wellknown.register(app)
    # Named inside the blueprint ("mcp."), so its hooks (the 401 challenge) run for it too.
    app.add_url_rule(READONLY_ALIAS, endpoint="mcp.ReadOnlyAlias", methods=["POST"],
                     view_func=app.view_functions["mcp.ReadOnlyEndpoint"])
    # First of all hooks: a foreign Origin is refused before rate limiting or the
    # credential lookup, so a rebinding page learns nothing (not even 401 vs 403).
    app.before_request_funcs.setdefault(None, []).insert(0, _origin_guard)
    catalogue(app)  # now, so the OpenAPI document is complete before the first request
