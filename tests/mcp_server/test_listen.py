"""MCP ``subscriptions/listen`` (2026-07-28): the caller's notifications stream over real HTTP,
to the official SDK client and to a raw client; scopes, the stream cap, the graceful end."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated

from blueprints.mcp import listen
from services.notifications import events
from tests.conftest import DEADLINE
from tests.mcp_server.conftest import LEGACY_HEADERS, modern_call, modern_meta, run_client

NOTIFICATIONS = "copytrade://notifications"


@pytest.fixture(autouse=True)
def quick_keepalive(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Keep-alives every 0.2 s, so a client gone is noticed at once; every stream a test
    opened is closed by the server before the next test."""
    monkeypatch.setattr(listen, "KEEPALIVE_SECONDS", 0.2)
    monkeypatch.setattr(listen, "WAIT_SECONDS", 0.1)
    # The count is the process's: a stream another module's test left waiting (a 2025-11-25
    # confirmation holds a slot until it is answered or expires) is not this test's to close.
    # Twice in a quiet fresh-clone run, one such slot failed every later teardown here.
    before = listen.open_streams()
    yield
    _wait(lambda: listen.open_streams() <= before)


def _emit(user: Any, name: str = "claim.available", key: str = "one", **payload: Any
          ) -> str | None:
    payload = payload or {"amount": "7", "market": "Rain in Paris?\x07 <b>ignore me</b>"}
    row = events.emit(user, name, f"{name}:{key}", link="/dashboard/positions", **payload)
    return str(row.id) if row is not None else None


def test_the_sdk_client_hears_a_new_notification_and_reads_it(mcp_url, api_key, user):
    key = api_key("read:account", owner=user)
    heard: list[Any] = []

    async def tee(message: Any) -> None:
        heard.append(message)

    async def body(client: Client):
        assert client.protocol_version == "2026-07-28"
        async with client.listen(resource_subscriptions=[NOTIFICATIONS]) as sub:
            assert sub.honored.resource_subscriptions == [NOTIFICATIONS]
            emitted = await anyio.to_thread.run_sync(_emit, user)
            with anyio.fail_after(20):
                event = await sub.__anext__()
            read = await client.read_resource(event.uri)
            return emitted, event, read

    async def main():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30)
        async with http, Client(streamable_http_client(mcp_url, http_client=http),
                                mode="auto", cache=None, message_handler=tee) as client:
            return await body(client)

    emitted, event, read = anyio.run(main)
    assert isinstance(event, ResourceUpdated)
    assert event.uri == f"{NOTIFICATIONS}/{emitted}"
    shown = json.loads(read.contents[0].text)
    assert shown["id"] == emitted and shown["type"] == "claim.available"
    assert shown["text"].startswith("7.00 pUSD can be claimed from")
    # The market's words are third-party data, in the envelope, never our own text.
    assert shown["data"]["market"]["untrusted_data"]["source"] == "third_party"
    # The frame itself carries the notification too (no read-back needed).
    frames = [m for m in heard if getattr(m, "method", None) == "notifications/resources/updated"]
    assert frames and frames[0].params.meta["com.copytrade/notification"]["id"] == emitted


def _listen(url: str, token: str, notifications: dict[str, Any], request_id: Any = "l-1",
            headers: dict[str, str] | None = None) -> httpx.Response:
    params = {"_meta": modern_meta(), "notifications": notifications}
    sent = {**LEGACY_HEADERS, "Authorization": f"Bearer {token}",
            "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen",
            **(headers or {})}
    client = httpx.Client(timeout=httpx.Timeout(30))
    request = client.build_request("POST", url, headers=sent, json={
        "jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen",
        "params": params})
    return client.send(request, stream=True)


def _frames(response: httpx.Response) -> Iterator[dict[str, Any] | str]:
    """Each SSE event's JSON, or ":" for a comment line, as they arrive."""
    for line in response.iter_lines():
        if line.startswith("data: "):
            yield json.loads(line[6:])
        elif line.startswith(":"):
            yield ":"


def test_a_raw_client_sees_the_ack_each_notification_once_and_the_graceful_end(
        mcp_url, api_key, user, make_trader, set_settings):
    before = listen.open_streams()  # another module's waiting stream may hold a slot
    set_settings(mcp_listen_max_seconds=4.0)
    key = api_key("read:account", owner=user)
    stranger = make_trader(funds="0").user
    response = _listen(mcp_url, key, {"resourceSubscriptions": [NOTIFICATIONS, "file:///x"],
                                      "toolsListChanged": True}, request_id=7)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-accel-buffering"] == "no"
    frames = _frames(response)
    ack = next(frames)
    assert ack == {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                   "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 7},
                              "notifications": {"resourceSubscriptions": [NOTIFICATIONS]}}}
    mine = _emit(user, key="mine")
    _emit(stranger, key="theirs")  # another user's: never on this stream
    assert _emit(user, key="mine") is None  # the same event again: recorded once, pushed once
    seen = []
    for frame in frames:
        seen.append(frame)
        if isinstance(frame, dict) and "result" in frame:
            break
    response.close()
    updates = [f for f in seen if isinstance(f, dict) and f.get("method")]
    assert [u["params"]["uri"] for u in updates] == [f"{NOTIFICATIONS}/{mine}"]
    assert all(u["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7
               for u in updates)
    assert seen[-1] == {"jsonrpc": "2.0", "id": 7, "result": {
        "resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 7}}}
    _wait(lambda: listen.open_streams() <= before)


def _wait(condition: Any, timeout: float = DEADLINE) -> None:
    # A closed stream is seen when the server next writes to it: under a loaded machine
    # that took more than 10 s (the fresh-clone run beside the week's soak), so wait as
    # the rest of the suite does, returning the moment it holds.
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_without_read_account_the_stream_is_refused_with_the_challenge(mcp_url, api_key, user):
    key = api_key("read:markets", owner=user)
    response = _listen(mcp_url, key, {"resourceSubscriptions": [NOTIFICATIONS]})
    response.read()
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response.headers["WWW-Authenticate"]
    assert 'scope="read:account"' in response.headers["WWW-Authenticate"]
    body = response.json()
    assert body["error"]["code"] == -31403 and body["error"]["data"]["code"] == "scope_required"
    # Nothing to honor (no notifications asked): acknowledged empty and ended at once.
    other = _listen(mcp_url, key, {"toolsListChanged": True}, request_id=3)
    frames = [f for f in _frames(other) if f != ":"]
    assert frames[0]["params"]["notifications"] == {}
    assert frames[1] == {"jsonrpc": "2.0", "id": 3, "result": {
        "resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 3}}}


def test_bad_params_and_resources_reads(mcp_url, api_key, user, make_trader):
    key = api_key("read:account", owner=user)
    bad = _listen(mcp_url, key, {"resourceSubscriptions": "copytrade://notifications"})
    bad.read()
    assert bad.status_code == 400 and bad.json()["error"]["code"] == -32602
    missing = _listen(mcp_url, key, None)  # type: ignore[arg-type]
    missing.read()
    assert missing.status_code == 400
    listed = modern_call(mcp_url, key, "resources/list").json()["result"]
    assert [r["uri"] for r in listed["resources"]] == [NOTIFICATIONS]
    assert listed["cacheScope"] == "private"
    narrow = api_key("read:markets", owner=user)
    assert modern_call(mcp_url, narrow, "resources/list").json()["result"]["resources"] == []
    theirs = _emit(make_trader(funds="0").user, key="x")
    for uri in (f"{NOTIFICATIONS}/{theirs}", f"{NOTIFICATIONS}/nope", "file:///etc/passwd"):
        answer = modern_call(mcp_url, key, "resources/read", {"uri": uri},
                             headers={"Mcp-Name": uri})
        assert answer.status_code == 400, uri
        assert answer.json()["error"]["code"] == -32602
    mine = _emit(user, key="y")
    page = modern_call(mcp_url, key, "resources/read", {"uri": NOTIFICATIONS},
                       headers={"Mcp-Name": NOTIFICATIONS}).json()["result"]
    assert [n["id"] for n in json.loads(page["contents"][0]["text"])["notifications"]] == [mine]
    refused = modern_call(mcp_url, narrow, "resources/read", {"uri": NOTIFICATIONS},
                          headers={"Mcp-Name": NOTIFICATIONS})
    assert refused.status_code == 403


def test_streams_beyond_the_cap_get_429_and_a_closed_stream_frees_its_slot(
        mcp_url, api_key, user, set_settings):
    before = listen.open_streams()  # another module's waiting stream may hold a slot
    # room for one more than the process holds now (see quick_keepalive)
    set_settings(mcp_listen_streams=listen.open_streams() + 1)
    key = api_key("read:account", owner=user)
    first = _listen(mcp_url, key, {"resourceSubscriptions": [NOTIFICATIONS]})
    # Kept: a frames generator collected at once closes the stream under it, and the slot
    # would be free again before the second listen.
    first_frames = _frames(first)
    assert next(first_frames)["method"] == "notifications/subscriptions/acknowledged"
    second = _listen(mcp_url, key, {"resourceSubscriptions": [NOTIFICATIONS]})
    second.read()
    assert second.status_code == 429 and second.headers["Retry-After"] == "30"
    error = second.json()["error"]
    assert error["code"] == -31429 and error["data"]["code"] == "rate_limited"
    first.close()  # the client goes away: the server notices at its next write
    _wait(lambda: listen.open_streams() <= before)
    third = _listen(mcp_url, key, {"resourceSubscriptions": [NOTIFICATIONS]})
    assert third.status_code == 200
    third.close()


def test_a_revoked_key_ends_the_stream_before_anything_more_is_sent(mcp_url, api_key, user):
    from models.base import utcnow
    from models.identity import ApiKey

    key = api_key("read:account", owner=user)
    response = _listen(mcp_url, key, {"resourceSubscriptions": [NOTIFICATIONS]}, request_id=9)
    frames = _frames(response)
    next(frames)
    ApiKey.update(revoked_at=utcnow()).where(ApiKey.user == user).execute()
    _emit(user, key="after-revoke")
    rest = [f for f in frames if f != ":"]  # keep-alive comments carry nothing
    assert rest == [{"jsonrpc": "2.0", "id": 9, "result": {
        "resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 9}}}]


@pytest.mark.parametrize("version", ["2025-11-25"])
def test_the_legacy_era_has_no_listen(mcp_url, api_key, user, version):
    key = api_key("read:account", owner=user)

    async def body(client: Client):
        with pytest.raises(Exception, match="2026-07-28"):
            async with client.listen(resource_subscriptions=[NOTIFICATIONS]):
                pass
        return True

    assert run_client(mcp_url, key, "legacy", body)


def test_one_user_cannot_hold_every_slot(mcp_url, api_key, user, make_trader, set_settings):
    before = listen.open_streams()  # another module's waiting stream may hold a slot
    """With room for three streams and one per user, a user's second listen is refused with
    the 429 body while another user's still opens and hears its own notification."""
    from mcp.shared.exceptions import MCPError

    from config import Settings

    assert Settings.mcp_listen_streams_per_user == 1  # the documented default
    set_settings(mcp_listen_streams=listen.open_streams() + 3)
    other = make_trader(funds="0").user
    mine, theirs = api_key("read:account", owner=user), api_key("read:account", owner=other)

    async def connect(token: str, body: Any) -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with http, Client(streamable_http_client(mcp_url, http_client=http),
                                mode="auto", cache=None) as client:
            return await body(client)

    async def main() -> tuple[MCPError, Any]:
        async def first(client: Client) -> tuple[MCPError, Any]:
            async with client.listen(resource_subscriptions=[NOTIFICATIONS]):
                with pytest.raises(MCPError) as refused:
                    async with client.listen(resource_subscriptions=[NOTIFICATIONS]):
                        pass
                heard = await connect(theirs, other_listens)
            await anyio.to_thread.run_sync(_wait, lambda: listen.open_streams() <= before)
            async with client.listen(resource_subscriptions=[NOTIFICATIONS]) as again:
                assert again.honored.resource_subscriptions == [NOTIFICATIONS]
            return refused.value, heard

        async def other_listens(client: Client) -> Any:
            async with client.listen(resource_subscriptions=[NOTIFICATIONS]) as sub:
                emitted = await anyio.to_thread.run_sync(_emit, other)
                with anyio.fail_after(20):
                    event = await sub.__anext__()
                held = listen.open_streams()  # the first user's one and this one
            return emitted, event.uri, held

        return await connect(mine, first)

    refused, (emitted, uri, held) = anyio.run(main)
    assert refused.error.code == -31429
    assert refused.error.data["code"] == "rate_limited"
    assert "one user" in refused.error.message
    assert uri == f"{NOTIFICATIONS}/{emitted}"
    assert held - before == 2
