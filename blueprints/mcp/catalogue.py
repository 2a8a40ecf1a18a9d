"""Tool definitions as MCP sends them, generated once per app from the tool table.

``inputSchema`` and ``outputSchema`` come from the tools' marshmallow schemas through
the same generator as the OpenAPI document (schema_export.py); the manifest lists the
same names and scopes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from flask import Flask
from marshmallow import Schema

from blueprints.mcp import schema_export
from blueprints.mcp.tools import TOOLS, Tool, with_idempotency_key
from services.identity import money_tools

META_SCOPE = "com.copytrade/scope"
_LOCK = threading.Lock()
_KEY = "mcp_tool_catalogue"


@dataclass(frozen=True)
class CatalogueEntry:
    """A tool with its full input schema class and its MCP definition."""

    tool: Tool
    input_schema: type[Schema]
    definition: dict[str, Any]


def _with_argument_groups(tool: Tool, input_json: dict[str, Any]) -> dict[str, Any]:
    """``input_json`` stating the tool's "one of these" argument groups (``anyOf``)."""
    if not tool.one_of:
        return input_json
    known = set(input_json.get("properties", {}))
    for group in tool.one_of:
        if not set(group) <= known:
            raise ValueError(f"{tool.name}: argument group {group} names unknown arguments")
    return {**input_json, "anyOf": [{"required": list(group)} for group in tool.one_of]}


def _definition(tool: Tool, input_json: dict[str, Any], output_json: dict[str, Any]
                ) -> dict[str, Any]:
    definition = {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": _with_argument_groups(tool, input_json),
        "outputSchema": output_json,
        "annotations": tool.annotations.as_json(tool.title),
        "_meta": {META_SCOPE: tool.scope},
    }
    if money_tools.guarded(tool.name):  # 2025-11-25 tasks: followed to a final state
        definition["execution"] = {"taskSupport": "optional"}
    return definition


def catalogue(app: Flask) -> dict[str, CatalogueEntry]:
    """Every tool's entry by name, in table order (built on first use, then cached)."""
    built = app.extensions.get(_KEY)
    if built is not None:
        return built
    with _LOCK:
        built = app.extensions.get(_KEY)
        if built is not None:
            return built
        inputs = {tool.name: with_idempotency_key(tool) for tool in TOOLS}
        raw = {tool.name: (schema_export.raw_json_schema(app, inputs[tool.name]),
                           schema_export.raw_json_schema(app, tool.output.schema))
               for tool in TOOLS}
        library = schema_export.components(app)  # after converting: nested ones are in
        built = {}
        for tool in TOOLS:
            raw_in, raw_out = raw[tool.name]
            built[tool.name] = CatalogueEntry(
                tool=tool, input_schema=inputs[tool.name],
                definition=_definition(tool, schema_export.inline(raw_in, library),
                                       schema_export.inline(raw_out, library)))
        app.extensions[_KEY] = built
        return built
