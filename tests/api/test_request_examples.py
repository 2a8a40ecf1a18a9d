"""Every request body the REST reference shows is a whole, valid request (issue 44): each
JSON body route has its own example (schemas/request_examples.py), which passes the
OpenAPI schema, the route's marshmallow schema and the rules the services apply behind it
(an order names its size; a connected wallet is its key's), and the generated reference
shows exactly that example."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from marshmallow import class_registry

from blueprints.mcp.tools import TOOLS_BY_NAME
from schemas import request_examples
from schemas.jsonrpc import JsonRpcRequestSchema
from services.copying.configs import rules
from services.trading import order_plan
from venue.accounts import WalletType, classify_wallet
from venue.accounts.classification import POLYGON
from venue.signing import OrderKey

ROOT = Path(__file__).resolve().parents[2]
# The OpenAPI document is the same on either database.
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bodies(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(``METHOD path``, its JSON request body) for every route that takes one."""
    found = []
    for path, item in sorted(spec["paths"].items()):
        if path.startswith("/api/_"):
            continue  # routes other tests register on the shared app (/api/_echo), as test_openapi
        for method, op in item.items():
            if method not in ("post", "put", "patch", "delete"):
                continue  # "parameters" shared by a path's routes, and bodiless GETs
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if isinstance(body, dict) and "schema" in body:
                found.append((f"{method.upper()} {path}", body))
    return found


def _marshmallow_schema(body: dict[str, Any]) -> Any:
    """The marshmallow schema behind a body's component (None for an inline schema)."""
    ref = body["schema"].get("$ref")
    if ref is None:
        return None
    return class_registry.get_class(ref.rsplit("/", 1)[1] + "Schema")()


@SQLITE_ONLY
def test_every_request_example_is_whole_and_passes_its_schema(client) -> None:
    spec = client.get("/openapi.json").get_json()
    generator = _generator()
    reference = (ROOT / "docs" / "reference" / "rest-api.md").read_text()
    bodies = _bodies(spec)
    assert len(bodies) >= 20  # every route with a JSON body, not a few
    for route, body in bodies:
        assert "example" in body, f"{route}: no example of its own"
        example = body["example"]
        # The OpenAPI schema (components resolved from the document itself).
        jsonschema.validate(example, {**body["schema"], "components": spec["components"]})
        schema = _marshmallow_schema(body)
        if schema is not None:
            assert schema.validate(example) == {}, (route, schema.validate(example))
        # The reference page prints this very example.
        assert generator.request_example(spec, body) == example, route
        assert json.dumps(example, indent=2) in reference, route


def test_the_order_examples_name_their_size_and_pass_the_order_rules() -> None:
    for example in (request_examples.ORDER_PREVIEW, request_examples.ORDER):
        assert example["size"] == "10"
        _token, _side, size, kind, _price, amount = order_plan.normalize_request(
            example["token_id"],
            example["side"],
            example["size"],
            example["order_type"],
            example.get("price"),
            example.get("amount"),
        )
        assert (str(size), kind, amount) == ("10", "market", None)
    assert request_examples.ORDER["preview_id"]  # the placing call names its quote


def test_the_other_examples_pass_the_rules_behind_their_schemas() -> None:
    connect = request_examples.CONNECT
    signer = OrderKey(connect["private_key"]).address
    assert classify_wallet(signer, connect["wallet_address"], POLYGON) is WalletType.DEPOSIT_WALLET
    assert rules.validate_fields(request_examples.CONFIG_PREVIEW)["max_position_usdc"] == 100
    rules.validate_fields(request_examples.CONFIG_EDIT, partial=True)
    call = JsonRpcRequestSchema().load(request_examples.JSON_RPC)
    tool = TOOLS_BY_NAME[call["params"]["name"]]
    assert tool.input().validate(call["params"]["arguments"]) == {}


# Integer fields whose 0 is a real value, not the type's placeholder.
_ZERO_MEANS = {"outcome_index", "client_secret_expires_at"}  # the first outcome; never


def _placeholders(value: Any, where: str = "", zeros: bool = False) -> list[str]:
    """Where ``value`` holds a made-from-the-type value: "string", the decimal's generic
    "12.5", or (unless ``zeros``: a route's own example, whose 0s are counted) an integer
    0 that means nothing."""
    if isinstance(value, dict):
        return [found for key, item in value.items()
                for found in _placeholders(item, f"{where}.{key}", zeros)]
    if isinstance(value, list):
        return [found for item in value for found in _placeholders(item, f"{where}[]", zeros)]
    field = where.rsplit(".", 1)[-1].removesuffix("[]")
    if value in ("string", "12.5") or (type(value) is int and value == 0 and not zeros
                                       and field not in _ZERO_MEANS):
        return [f"{where}: {value!r}"]
    return []


@SQLITE_ONLY
def test_every_answer_example_reads_like_a_real_answer(client) -> None:
    spec = client.get("/openapi.json").get_json()
    generator = _generator()
    reference = (ROOT / "docs" / "reference" / "rest-api.md").read_text()
    answers = 0
    for path, item in sorted(spec["paths"].items()):
        if path.startswith("/api/_"):
            continue  # routes other tests register on the shared app
        for method, op in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            for status, answer in op.get("responses", {}).items():
                content = answer.get("content", {}).get("application/json", {})
                if not status.startswith("2") or "schema" not in content:
                    continue
                route = f"{method.upper()} {path} {status}"
                example = generator.answer_example(spec, content)
                answers += 1
                # no "string" for an id, no 0 for a latency, no "12.5" for a price
                found = _placeholders(example, zeros="example" in content)
                assert not found, (route, found)
                # and a valid answer: the types and choices the schema promises
                jsonschema.validate(example, {**content["schema"],
                                              "components": spec["components"]})
                assert json.dumps(example, indent=2) in reference, route
    assert answers >= 60  # every documented answer, not a few
