"""The whole flow as a hosted MCP client runs it: the official SDK's OAuthClientProvider
against the app on a real port (401 -> discovery -> registration -> sign-in and consent
over HTTP -> token -> tools/list filtered to the approved scopes -> refresh)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from models.oauth import OAuthToken as StoredToken
from tests.api.oauth_flow import REDIRECT_URI, csrf_from, page_csrf
from tests.conftest import free_port
from tests.http_helpers import serving
from tests.mail_inbox import Inbox

EMAIL = "agent.owner@example.com"
APPROVED = ["read:account", "read:markets"]


class MemoryStorage:
    """The SDK's TokenStorage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@pytest.fixture
def live_app(app, set_settings) -> Iterator[str]:
    """The app served on a free port by a threaded werkzeug server; BASE_URL points at it."""
    port = free_port()
    set_settings(base_url=f"http://127.0.0.1:{port}")
    with serving(app, port) as base:
        yield base




class Browser:
    """The user's browser: signs in on the dashboard's sign-in page with the emailed code
    and answers the consent page."""

    def __init__(self, base: str, inbox: Inbox) -> None:
        self.base = base
        self.inbox = inbox
        self.http = httpx2.AsyncClient(base_url=base, follow_redirects=False, timeout=30)
        self.authorization_url: str | None = None
        self.consent_html = ""

    async def open(self, url: str) -> None:
        """The provider's redirect handler: remember where the user is sent."""
        self.authorization_url = url

    async def approve(self) -> AuthorizationCodeResult:
        """The provider's callback handler: sign in, approve APPROVED, read the redirect."""
        assert self.authorization_url and self.authorization_url.startswith(self.base)
        response = await self.http.get(self.authorization_url)
        assert response.status_code == 302
        login_url = response.headers["location"]
        assert urlsplit(login_url).path == "/dashboard/login"
        [target] = parse_qs(urlsplit(login_url).query)["next"]
        assert target.startswith("/oauth/authorize?")
        # The sign-in page's two forms (email, then code) as its htmx would post them,
        # without htmx: the token from the page, `next` carried through both steps.
        page = await self.http.get(login_url)
        assert page.status_code == 200, page.text
        csrf = page_csrf(page.text)
        sent = await self.http.post("/dashboard/login", data={
            "csrf_token": csrf, "email": EMAIL, "next": target})
        assert sent.status_code == 200, sent.text
        assert f'name="next" value="{target.replace("&", "&amp;")}"' in sent.text
        code, _ = self.inbox.last_for(EMAIL)
        verified = await self.http.post("/dashboard/login/verify", data={
            "csrf_token": csrf, "email": EMAIL, "code": code, "next": target})
        assert verified.status_code == 303, verified.text
        assert verified.headers["location"] == target
        consent_url = urljoin(self.base, verified.headers["location"])
        page = await self.http.get(consent_url)
        assert page.status_code == 200, page.text
        self.consent_html = page.text
        decided = await self.http.post(consent_url, data={
            "csrf_token": csrf_from(page.text), "decision": "approve",
            "approved_scope": APPROVED})
        assert decided.status_code == 302, decided.text
        location = decided.headers["location"]
        assert location.startswith(REDIRECT_URI)
        params = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"),
                                       iss=params.get("iss"))


def _provider(server_url: str, browser: Browser, storage: MemoryStorage) -> OAuthClientProvider:
    metadata = OAuthClientMetadata(
        client_name="Hosted Agent", redirect_uris=[REDIRECT_URI],
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="none")
    return OAuthClientProvider(server_url=server_url, client_metadata=metadata,
                               storage=storage, redirect_handler=browser.open,
                               callback_handler=browser.approve)


def _recorder(log: list[tuple[str, str]]) -> dict[str, list[Any]]:
    async def on_response(response: httpx2.Response) -> None:
        log.append((response.request.method, response.request.url.path,
                    response.status_code))

    return {"response": [on_response]}


def _run(main: Callable[[], Awaitable[Any]]) -> Any:
    """``anyio.run(main)`` on a thread of its own: when the dashboard's browser tests run in
    the same session, Playwright's event loop is already running on this one."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, main).result()


def _paths(log: list[tuple[str, str, int]]) -> list[str]:
    return [path for _, path, _ in log]


def test_hosted_mcp_client_runs_the_whole_flow(live_app, inbox, bound_db):
    storage = MemoryStorage()
    browser = Browser(live_app, inbox)
    log: list[tuple[str, str, int]] = []
    mcp_url = live_app + "/api/mcp"

    async def run() -> dict[str, Any]:
        provider = _provider(mcp_url, browser, storage)
        async with (httpx2.AsyncClient(auth=provider, timeout=30,
                                       event_hooks=_recorder(log)) as http,
                    streamable_http_client(mcp_url, http_client=http) as (read, write),
                    ClientSession(read, write) as session):
            await session.initialize()
            first = await session.list_tools()
            tokens_before = storage.tokens
            # The access token's hour is up (client clock): the provider refreshes.
            provider.context.token_expiry_time = time.time() - 1
            second = await session.list_tools()
        await browser.http.aclose()
        return {"first": first, "second": second, "tokens_before": tokens_before}

    result = _run(run)
    paths = _paths(log)
    # 401 with resource_metadata -> discovery -> registration -> token.
    assert log[0][1] == "/api/mcp" and log[0][2] == 401
    assert paths.index("/.well-known/oauth-protected-resource") < paths.index(
        "/.well-known/oauth-authorization-server") < paths.index("/oauth/register") < (
        paths.index("/oauth/token"))
    assert "wallet:write" in browser.consent_html  # offered (the client asked for it) ...
    assert 'value="wallet:write"\n             >' in browser.consent_html  # ... not ticked

    names = {tool.name for tool in result["first"].tools}
    assert {"get_platform_stats", "get_user_summary", "search_markets"} <= names
    assert not names & {"place_market_order", "cancel_order", "claim_positions",
                        "list_trades", "list_open_positions"}
    assert {tool.name for tool in result["second"].tools} == names

    before, after = result["tokens_before"], storage.tokens
    assert before.access_token.startswith("svco_") and before.scope == " ".join(APPROVED)
    assert after.access_token != before.access_token
    assert after.refresh_token != before.refresh_token  # rotated
    assert paths.count("/oauth/token") == 2
    assert StoredToken.select().count() == 2
    stored = StoredToken.select().order_by(StoredToken.created_at).first()
    assert stored.resource == mcp_url and stored.rotated_at is not None


def test_the_provider_flow_against_the_rest_api_resource(live_app, inbox, bound_db):
    """The same SDK flow for the REST API as a second resource (discovered by path)."""
    storage = MemoryStorage()
    browser = Browser(live_app, inbox)
    log: list[tuple[str, str, int]] = []

    async def run() -> tuple[int, dict[str, Any], int, int]:
        provider = _provider(live_app + "/api", browser, storage)
        async with httpx2.AsyncClient(auth=provider, timeout=30,
                                      event_hooks=_recorder(log)) as http:
            me = await http.get(live_app + "/api/users/me")
            positions = await http.get(live_app + "/api/positions")
            # An MCP-bound request with this REST token is refused (RFC 8707 audience).
            plain = httpx2.AsyncClient(timeout=30)
            cross = await plain.post(live_app + "/api/mcp", json={
                "jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={
                "Authorization": f"Bearer {storage.tokens.access_token}",
                "Accept": "application/json, text/event-stream"})
            await plain.aclose()
        await browser.http.aclose()
        return me.status_code, me.json(), positions.status_code, cross.status_code

    status, body, positions_status, cross_status = _run(run)
    assert status == 200 and body["email"] == EMAIL
    assert positions_status == 403  # read:positions was not approved
    assert cross_status == 401
    assert "/.well-known/oauth-protected-resource/api" in _paths(log)
    assert StoredToken.get().resource == live_app + "/api"
