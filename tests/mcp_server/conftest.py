"""Fixtures for the MCP server tests: the app on a real HTTP server, keys, the SDK client.

(The package is ``tests/mcp_server`` because ``tests/mcp`` would shadow the SDK.)
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from decimal import Decimal
from typing import Any, TypeVar

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.http_helpers import serving
from venue.tls import client_context

T = TypeVar("T")

LEGACY_HEADERS = {"Accept": "application/json, text/event-stream",
                  "Content-Type": "application/json"}


@pytest.fixture
def live_server(app) -> Iterator[str]:
    """The test app on a real threaded HTTP server; its base URL."""
    with serving(app) as base:
        yield base


@pytest.fixture
def mcp_url(live_server: str) -> str:
    """The MCP endpoint of the live server."""
    return f"{live_server}/api/mcp"


@pytest.fixture
def trader_key(api_key, trader) -> Callable[..., str]:
    """``trader_key(*scopes, confirm=False)``: an API key of the funded ``trader``.

    Its owner switched confirmations off (``confirm=False``), as for an unattended agent:
    the tests of money tools' other rules call them directly. ``confirm=True`` keeps the
    default (a person confirms each money-moving call; test_confirmations.py)."""

    def mint(*scopes: str, confirm: bool = False) -> str:
        secret = api_key(*scopes, owner=trader.user)
        if not confirm:
            set_confirmations(trader.user, secret, on=False)
        return secret

    return mint


def set_confirmations(owner: Any, secret: str, *, on: bool) -> None:
    """Switch confirmations for the key ``secret`` as its owner does on the dashboard."""
    from models import ApiKey
    from services.identity import agent_confirmations, keys

    key = ApiKey.get(ApiKey.id == keys.resolve(secret).credential_id)
    agent_confirmations.set_required(session_of(owner), "api_key", key.id, on)


def session_of(owner: Any) -> Any:
    """A session Principal of ``owner`` (what the dashboard acts as)."""
    import uuid

    from schemas.vocabulary import ALL_SCOPES
    from services.platform.principal import Principal

    return Principal(user=owner, kind="session", scopes=ALL_SCOPES, credential_id=uuid.uuid4())


def run_client(url: str, token: str, mode: str,
               body: Callable[[Client], Awaitable[T]], *,
               elicitation: Callable[..., Awaitable[Any]] | None = None,
               extensions: list[Any] | None = None) -> T:
    """Connect the official SDK client (``mode`` legacy or auto) and run ``body`` with it;
    ``elicitation``: the client's elicitation callback (it then declares the capability);
    ``extensions``: the client's extensions (ClientExtension instances)."""

    async def main() -> T:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                  timeout=httpx2.Timeout(30, read=120),
                                  verify=client_context())
        async with http, Client(streamable_http_client(url, http_client=http), mode=mode,
                                cache=None, elicitation_callback=elicitation,
                                extensions=extensions) as client:
            return await body(client)

    return anyio.run(main)


def rpc(url: str, message: Any, token: str | None = None, *, version: str | None = None,
        headers: dict[str, str] | None = None) -> httpx.Response:
    """POST one raw JSON-RPC message (or anything) to the endpoint."""
    sent = dict(LEGACY_HEADERS)
    if token:
        sent["Authorization"] = f"Bearer {token}"
    if version:
        sent["MCP-Protocol-Version"] = version
    sent.update(headers or {})
    content = message if isinstance(message, str | bytes) else json.dumps(message)
    return httpx.post(url, content=content, headers=sent, timeout=60, verify=client_context())


def decode(response: httpx.Response) -> Any:
    """A JSON body with any float as Decimal."""
    return json.loads(response.text, parse_float=Decimal)


def modern_meta(version: str = "2026-07-28") -> dict[str, Any]:
    """The 2026-07-28 per-request ``_meta`` envelope."""
    return {"io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}


def modern_call(url: str, token: str, method: str, params: dict[str, Any] | None = None,
                *, request_id: Any = 1, headers: dict[str, str] | None = None,
                meta: dict[str, Any] | None = None) -> httpx.Response:
    """A well-formed 2026-07-28 request: _meta envelope and mirrored headers."""
    body_params = dict(params or {})
    body_params["_meta"] = meta if meta is not None else modern_meta()
    sent = {"Mcp-Method": method}
    if method == "tools/call":
        sent["Mcp-Name"] = str(body_params.get("name"))
    sent.update(headers or {})
    return rpc(url, {"jsonrpc": "2.0", "id": request_id, "method": method,
                     "params": body_params}, token, version="2026-07-28", headers=sent)
