"""JSON-RPC 2.0 envelopes of the MCP endpoint, for its OpenAPI description.

The endpoint parses bodies itself (JSON-RPC errors, not REST errors, answer malformed
ones); these schemas document the shapes.
"""

from __future__ import annotations

from marshmallow import Schema, fields, validate

_ID = {"type": ["string", "integer"],
       "description": "Request id (a string or an integer); omit it for a notification."}


class JsonRpcRequestSchema(Schema):
    """A JSON-RPC 2.0 request or notification (one per POST; arrays are refused)."""

    jsonrpc = fields.String(required=True, validate=validate.Equal("2.0"),
                            metadata={"const": "2.0"})
    id = fields.Raw(metadata=_ID)
    method = fields.String(required=True, metadata={
        "description": "initialize, ping, server/discover, tools/list or tools/call.",
        "examples": ["tools/call"]})
    params = fields.Dict(metadata={
        "description": "Method parameters. tools/call: {name, arguments}. On 2026-07-28, "
                       "`_meta` carries the protocol version and client capabilities."})


class JsonRpcErrorObjectSchema(Schema):
    """The ``error`` member of a JSON-RPC error response."""

    code = fields.Integer(required=True, metadata={
        "description": "-32700 parse error, -32600 invalid request, -32601 method not found, "
                       "-32602 invalid params, -32020 header mismatch, -32022 unsupported "
                       "protocol version, -31403 scope required."})
    message = fields.String(required=True)
    data = fields.Raw()


class JsonRpcResponseSchema(Schema):
    """A JSON-RPC 2.0 response: ``result`` or ``error``."""

    jsonrpc = fields.String(required=True, metadata={"const": "2.0"})
    id = fields.Raw(required=True, metadata={"type": ["string", "integer", "null"]})
    result = fields.Dict(metadata={
        "description": "tools/call: {content, structuredContent, isError}. Tool failures "
                       "are results with isError true and structuredContent {error, code}."})
    error = fields.Nested(JsonRpcErrorObjectSchema)
