"""The Streamable HTTP rules, over raw HTTP: methods, notifications, batches, Origin, errors,
version negotiation, sessions, and the stateless 2026-07-28 era with its mirrored headers."""

from __future__ import annotations

import base64

import httpx
import pytest

from blueprints.mcp.tools import TOOLS
from tests.conftest import one_database
from tests.mcp_server.conftest import decode, modern_call, modern_meta, rpc

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.fixture
def token(api_key, user) -> str:
    """A key allowed to read markets."""
    return api_key("read:markets", owner=user)


def initialize(url: str, token: str, version: str = "2025-11-25") -> httpx.Response:
    return rpc(url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}, token)


# ---- HTTP methods, notifications, batches, Origin ----------------------------------------

def test_get_and_delete_are_405(mcp_url, token):
    for method in ("GET", "DELETE"):
        response = httpx.request(method, mcp_url, headers={
            "Authorization": f"Bearer {token}", "Accept": "text/event-stream"})
        assert response.status_code == 405, method
        assert "POST" in response.headers["Allow"]


def test_notifications_and_responses_are_202_without_body(mcp_url, token):
    for version in ("2025-11-25", "2026-07-28"):
        note = rpc(mcp_url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, token,
                   version=version)
        assert note.status_code == 202 and note.content == b""
    cancelled = rpc(mcp_url, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": 3}}, token)
    assert cancelled.status_code == 202 and cancelled.content == b""
    answer = rpc(mcp_url, {"jsonrpc": "2.0", "id": 5, "result": {}}, token,
                 version="2025-11-25")
    assert answer.status_code == 202 and answer.content == b""


def test_batches_are_refused(mcp_url, token):
    response = rpc(mcp_url, [LIST, {**LIST, "id": 2}], token, version="2025-11-25")
    assert response.status_code == 400
    assert response.headers["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["id"] is None and body["error"]["code"] == -32600
    assert "Batch" in body["error"]["message"]


def test_a_foreign_origin_is_403_before_anything_else(mcp_url, token):
    for credential in (token, None):
        refused = rpc(mcp_url, LIST, credential, version="2025-11-25",
                      headers={"Origin": "http://evil.example"})
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == -32600 and refused.json()["id"] is None
    same_site = rpc(mcp_url, LIST, token, version="2025-11-25",
                    headers={"Origin": "http://127.0.0.1:8000"})  # BASE_URL's origin
    assert same_site.status_code == 200


def test_listed_origins_are_allowed(mcp_url, token, set_settings):
    set_settings(mcp_allowed_origins=("https://agent.example.com",))
    allowed = rpc(mcp_url, LIST, token, version="2025-11-25",
                  headers={"Origin": "https://agent.example.com"})
    assert allowed.status_code == 200


# ---- JSON-RPC errors -----------------------------------------------------------------

def test_unknown_methods_are_32601(mcp_url, token):
    legacy = rpc(mcp_url, {"jsonrpc": "2.0", "id": "a", "method": "resources/list"}, token,
                 version="2025-11-25")
    assert legacy.status_code == 200
    assert legacy.json() == {"jsonrpc": "2.0", "id": "a", "error": {
        "code": -32601, "message": legacy.json()["error"]["message"]}}
    modern = modern_call(mcp_url, token, "prompts/list")
    assert modern.status_code == 404 and modern.json()["error"]["code"] == -32601


@pytest.mark.parametrize(("message", "why"), [
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}},
     "name"),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope"}},
     "Unknown tool"),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {"name": "search_markets", "arguments": ["bitcoin"]}}, "arguments"),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": ["x"]}, "params"),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "zz"}},
     "cursor"),
    ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}, "protocolVersion"),
])
def test_bad_params_are_32602_never_500(mcp_url, token, message, why):
    response = rpc(mcp_url, message, token, version="2025-11-25")
    assert response.status_code == 200
    error = response.json()["error"]
    assert error["code"] == -32602 and why in error["message"]


def test_malformed_messages(mcp_url, token):
    not_json = rpc(mcp_url, "{nope", token)
    assert not_json.status_code == 400 and not_json.json()["error"]["code"] == -32700
    for message in ({"id": 1, "method": "tools/list"},  # no jsonrpc
                    {"jsonrpc": "2.0", "id": 1, "method": 7},
                    {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
                    {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"},
                    5):
        response = rpc(mcp_url, message, token, version="2025-11-25")
        assert response.status_code == 400, message
        assert response.json()["error"]["code"] == -32600
    wrong_type = httpx.post(mcp_url, content=b"tools/list", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "text/plain"})
    assert wrong_type.status_code == 415


@pytest.mark.parametrize("depth", [65, 100_000])
def test_deeply_nested_json_is_a_parse_error_not_a_500(mcp_url, token, depth):
    # 100,000 levels overflow the parser (RecursionError); 65 parse but pass the bound
    body = ('{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": '
            + "[" * depth + "]" * depth + "}}")
    response = rpc(mcp_url, body, token)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == -32700
    assert "nests deeper" in response.json()["error"]["message"]
    # a reasonable nesting is still an ordinary request
    shallow = {**LIST, "params": {"_meta": {"a": [[[[{"b": [1]}]]]]}}}
    assert rpc(mcp_url, shallow, token).status_code == 200


def test_tool_argument_errors_are_is_error_results(mcp_url, token):
    response = rpc(mcp_url, {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "search_markets", "arguments": {"query": "btc", "surprise": 1}}}, token,
        version="2025-11-25")
    result = decode(response)["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == "validation_failed"
    assert "surprise" in result["structuredContent"]["fields"]
    assert result["content"][0]["type"] == "text"


# ---- the legacy era: initialize, negotiation, sessions ------------------------------------

@pytest.mark.parametrize(("offered", "agreed"), [
    ("2025-11-25", "2025-11-25"), ("2025-06-18", "2025-06-18"),
    ("2025-03-26", "2025-11-25"), ("2024-11-05", "2025-11-25"), ("2026-07-28", "2025-11-25"),
    ("1999-01-01", "2025-11-25")])
def test_initialize_negotiates_a_version(mcp_url, token, offered, agreed):
    response = initialize(mcp_url, token, offered)
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["protocolVersion"] == agreed
    tasks = {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
    assert result["capabilities"] == {"tools": {"listChanged": False},
                                      **(tasks if agreed == "2025-11-25" else {})}
    assert result["serverInfo"]["name"] == "copytrade" and result["instructions"]
    assert response.headers["Mcp-Session-Id"]


def test_protocol_version_header_must_be_one_we_speak(mcp_url, token):
    for version in ("2025-03-26", "2099-01-01", "garbage"):
        response = rpc(mcp_url, LIST, token, version=version)
        assert response.status_code == 400, version
        error = response.json()["error"]
        assert error["code"] == -32022
        assert error["data"] == {"supported": ["2025-06-18", "2025-11-25", "2026-07-28"],
                                 "requested": version}
    for version in ("2025-06-18", "2025-11-25", None):
        ok = rpc(mcp_url, LIST, token, version=version)
        assert ok.status_code == 200 and "tools" in ok.json()["result"], version


def test_sessions_are_optional_and_checked(mcp_url, token, api_key, user, make_trader):
    session = initialize(mcp_url, token).headers["Mcp-Session-Id"]
    assert all(0x21 <= ord(c) <= 0x7E for c in session)
    ping = rpc(mcp_url, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, token,
               headers={"Mcp-Session-Id": session})
    assert ping.status_code == 200 and ping.json()["result"] == {}
    assert rpc(mcp_url, LIST, token, version="2025-11-25").status_code == 200  # no session
    forged = rpc(mcp_url, LIST, token, version="2025-11-25",
                 headers={"Mcp-Session-Id": session[:-2] + "xx"})
    assert forged.status_code == 404 and forged.json()["error"]["code"] == -32600
    stranger = api_key("read:markets", owner=make_trader(funds="0").user)
    borrowed = rpc(mcp_url, LIST, stranger, version="2025-11-25",
                   headers={"Mcp-Session-Id": session})
    assert borrowed.status_code == 404


def test_legacy_results_carry_no_modern_fields(mcp_url, token):
    result = rpc(mcp_url, LIST, token, version="2025-11-25").json()["result"]
    assert set(result) == {"tools"}
    tool = next(t for t in result["tools"] if t["name"] == "search_markets")
    assert set(tool) >= {"name", "title", "description", "inputSchema", "outputSchema",
                         "annotations"}
    assert tool["inputSchema"]["type"] == tool["outputSchema"]["type"] == "object"
    assert "$ref" not in str(tool)  # self-contained schemas


# ---- the modern era: stateless, discover, mirrored headers --------------------------------

def test_server_discover(mcp_url, token):
    response = modern_call(mcp_url, token, "server/discover")
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == ["2025-06-18", "2025-11-25", "2026-07-28"]
    assert result["capabilities"] == {"tools": {"listChanged": False},
                                      "resources": {"subscribe": True},
                                      "extensions": {"io.modelcontextprotocol/tasks": {}}}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "copytrade"
    assert result["ttlMs"] > 0 and result["cacheScope"] == "public"
    assert "Mcp-Session-Id" not in response.headers


def test_modern_requests_need_no_handshake_and_are_stateless(mcp_url, token):
    listed = modern_call(mcp_url, token, "tools/list")
    assert listed.status_code == 200
    result = listed.json()["result"]
    assert result["resultType"] == "complete" and result["cacheScope"] == "private"
    assert result["ttlMs"] > 0
    names = [t["name"] for t in result["tools"]]
    assert names == [t.name for t in TOOLS if t.scope in (None, "read:markets")]  # table order
    called = modern_call(mcp_url, token, "tools/call", {
        "name": "get_platform_stats", "arguments": {}},
        headers={"Mcp-Session-Id": "ignored"})
    assert called.status_code == 200
    body = decode(called)["result"]
    assert body["isError"] is False and body["resultType"] == "complete"
    assert set(body["structuredContent"]) >= {"total_users", "total_volume_usdc_24h"}
    assert "Mcp-Session-Id" not in called.headers


@pytest.mark.parametrize(("headers", "meta", "code"), [
    ({"Mcp-Method": "tools/list"}, None, -32020),            # method header differs
    ({"Mcp-Name": "search_markets"}, None, -32020),          # name header differs
    ({"Mcp-Method": ""}, None, -32020),
    ({}, {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}, -32602),  # no capabilities
    ({}, {"io.modelcontextprotocol/clientCapabilities": {}}, -32602),         # no version
    ({}, modern_meta("2025-11-25"), -32020),               # _meta and header disagree
])
def test_modern_header_and_meta_validation(mcp_url, token, headers, meta, code):
    response = modern_call(mcp_url, token, "tools/call", {
        "name": "get_platform_stats", "arguments": {}}, headers=headers, meta=meta)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert response.json()["id"] == 1


def test_modern_headers_are_required(mcp_url, token):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
            "params": {"_meta": modern_meta()}}
    no_method = rpc(mcp_url, body, token, version="2026-07-28")
    assert no_method.status_code == 400 and no_method.json()["error"]["code"] == -32020
    no_version = rpc(mcp_url, body, token, headers={"Mcp-Method": "tools/list"})
    assert no_version.status_code == 400 and no_version.json()["error"]["code"] == -32020
    no_meta = rpc(mcp_url, LIST, token, version="2026-07-28",
                  headers={"Mcp-Method": "tools/list"})
    assert no_meta.status_code == 400 and no_meta.json()["error"]["code"] == -32602
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "get_platform_stats", "arguments": {}, "_meta": modern_meta()}}
    no_name = rpc(mcp_url, call, token, version="2026-07-28",
                  headers={"Mcp-Method": "tools/call"})
    assert no_name.status_code == 400 and no_name.json()["error"]["code"] == -32020


def test_mcp_name_may_be_base64_encoded(mcp_url, token):
    encoded = "=?base64?" + base64.b64encode(b"get_platform_stats").decode() + "?="
    response = modern_call(mcp_url, token, "tools/call", {
        "name": "get_platform_stats", "arguments": {}}, headers={"Mcp-Name": encoded})
    assert response.status_code == 200 and response.json()["result"]["isError"] is False


def test_modern_bad_params_are_400(mcp_url, token):
    unknown = modern_call(mcp_url, token, "tools/call", {"name": "nope", "arguments": {}})
    assert unknown.status_code == 400 and unknown.json()["error"]["code"] == -32602


# ---- manifest and OpenAPI ---------------------------------------------------------------

@one_database
def test_manifest_and_server_card(client):
    manifest = client.get("/.well-known/mcp.json")
    assert manifest.status_code == 200
    assert manifest.headers["Access-Control-Allow-Origin"] == "*"
    doc = manifest.get_json()
    assert doc["endpoint"] == {"url": "http://127.0.0.1:8000/api/mcp",
                               "transport": "streamable-http", "methods": ["POST"],
                               "response_content_type": "application/json"}
    assert doc["protocol_versions"] == ["2025-06-18", "2025-11-25", "2026-07-28"]
    auth = doc["authentication"]
    assert [s["name"] for s in auth["scopes"]] == [
        "read:account", "read:positions", "read:trades", "read:markets", "trade:execute",
        "trade:cancel", "wallet:write"]
    assert auth["recommended_scopes"] == ["read:account", "read:positions", "read:trades",
                                          "read:markets", "trade:execute", "trade:cancel"]
    assert {c["token_prefix"] for c in auth["accepted_credentials"]} == {"svck_", "svco_"}
    assert auth["oauth"]["protected_resource_metadata"] == (
        "http://127.0.0.1:8000/.well-known/oauth-protected-resource")
    assert auth["oauth"]["authorization_server_metadata"] == (
        "http://127.0.0.1:8000/.well-known/oauth-authorization-server")
    assert doc["documentation"]["openapi"] == "http://127.0.0.1:8000/openapi.json"
    assert doc["documentation"]["explorer"] == "http://127.0.0.1:8000/api/docs"
    assert doc["tools_authoritative"] is False
    assert [(t["name"], t["scope"]) for t in doc["tools"]] == [(t.name, t.scope)
                                                                for t in TOOLS]
    card = client.get("/api/mcp/server-card")
    assert card.status_code == 200 and card.get_json() == doc
    assert card.headers["Access-Control-Allow-Origin"] == "*"
    for discovered in ("/.well-known/oauth-protected-resource",
                       "/.well-known/oauth-authorization-server"):
        assert client.get(discovered).status_code == 200


@one_database
def test_openapi_documents_the_endpoint(client):
    spec = client.get("/openapi.json").get_json()
    operation = spec["paths"]["/api/mcp"]["post"]
    assert operation["security"] == [{"apiKey": []}, {"oauth": []}]
    assert operation["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/JsonRpcRequest"}
    assert {"200", "202", "400", "401", "403", "404", "429"} <= set(operation["responses"])
    assert "get" not in spec["paths"]["/api/mcp"]
    assert "/.well-known/mcp.json" in spec["paths"]


def test_a_client_that_cannot_take_json_is_406(mcp_url, token):
    response = rpc(mcp_url, LIST, token, version="2025-11-25",
                   headers={"Accept": "text/event-stream"})
    assert response.status_code == 406 and response.json()["error"]["code"] == -32600


def test_an_unknown_oauth_token_gets_the_challenge(mcp_url):
    response = rpc(mcp_url, LIST, "svco_not-a-token", version="2025-11-25")
    assert response.status_code == 401 and response.json()["code"] == "invalid_token"
    challenge = response.headers["WWW-Authenticate"]
    assert 'resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource"' \
        in challenge and 'error="invalid_token"' in challenge
