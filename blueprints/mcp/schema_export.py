"""Marshmallow schemas as self-contained JSON Schemas, with the generator REST's OpenAPI uses.

The flask-smorest Api's marshmallow plugin turns a schema into JSON Schema (2020-12
compatible, since the document is OpenAPI 3.1), so a tool's ``inputSchema`` and
``outputSchema`` say exactly what the REST description says. Nested schemas come back
as ``#/components/schemas/...`` references into the OpenAPI document; a tool schema must
stand alone, so they are inlined (a schema that nests itself goes to ``$defs``).
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from flask import Flask
from marshmallow import Schema

COMPONENT_PREFIX = "#/components/schemas/"


def _converter(app: Flask) -> Any:
    return app.extensions["copytrade_api"].ma_plugin.converter


def raw_json_schema(app: Flask, schema: Schema | type[Schema]) -> dict[str, Any]:
    """The plugin's JSON Schema of ``schema`` (nested schemas as component references)."""
    instance = schema() if isinstance(schema, type) else schema
    return _converter(app).schema2jsonschema(instance)


def components(app: Flask) -> dict[str, Any]:
    """The OpenAPI document's schema components (read after converting, which adds some)."""
    return app.extensions["copytrade_api"].spec.to_dict().get("components", {}).get(
        "schemas", {})


def inline(document: dict[str, Any], library: dict[str, Any]) -> dict[str, Any]:
    """``document`` with every component reference replaced by the component it names."""
    defs: dict[str, Any] = {}

    def walk(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(COMPONENT_PREFIX):
            name = ref[len(COMPONENT_PREFIX):]
            if name in stack:  # recursive: refer to one shared definition instead
                if name not in defs:
                    defs[name] = None  # placeholder against re-entry
                    defs[name] = walk(deepcopy(library[name]), stack)
                return {"$ref": f"#/$defs/{name}"}
            return walk(deepcopy(library[name]), (*stack, name))
        return {key: walk(value, stack) for key, value in node.items()}

    result = walk(document, ())
    if defs:
        result["$defs"] = defs
    return result


def json_schema(app: Flask, schema: Schema | type[Schema],
                library: dict[str, Any] | None = None) -> dict[str, Any]:
    """A standalone JSON Schema of ``schema`` (pass ``library`` when converting many)."""
    raw = raw_json_schema(app, schema)
    return inline(raw, library if library is not None else components(app))
