"""MCP ``subscriptions/listen`` (2026-07-28): the caller's notifications as they happen.

The request's response is an SSE stream (``text/event-stream``) that stays open:

1. ``notifications/subscriptions/acknowledged`` first, with the honored filter: of
   ``resourceSubscriptions`` only ``copytrade://notifications`` (resources.py) is honored,
   and only for a credential holding ``read:account``; list-changed kinds are not (our lists
   do not change while a server runs). Asking for the notifications without the scope is
   403 ``insufficient_scope``, as a tool call is.
2. Each new in-app notification of the caller: ``notifications/resources/updated`` with
   ``uri`` ``copytrade://notifications/<id>`` (read it with ``resources/read``); its
   ``_meta`` carries the notification itself under ``com.copytrade/notification``, third-
   party text in the untrusted-data envelope, so a client need not read it back.
3. An SSE comment (``:``) every KEEPALIVE_SECONDS while quiet: proxies keep the stream and
   a client gone is noticed at the next write.
4. After MCP_LISTEN_MAX_SECONDS, when the credential stops resolving (revoked key,
   expired token), or when the web process stops (``STOPPING``), the graceful end: the
   JSON-RPC result ``{resultType: complete}``. A Redis failure ends the stream without it
   (the client listens again and lists what it missed: there is no replay).

Every frame carries ``_meta["io.modelcontextprotocol/subscriptionId"]`` = the request id.

Workers: gunicorn's gthread worker gives the stream one of its threads for its whole life
(its heartbeat is the main thread's, so a long response is never killed as stuck). A
process holds at most MCP_LISTEN_STREAMS of them (a call waiting for a confirmation on its
stream, server_requests.py, takes a slot too), and one user at most
MCP_LISTEN_STREAMS_PER_USER of those, so one user cannot take every slot (one more answers
HTTP 429 -31429 with Retry-After); that leaves the other threads serving, and
MCP_LISTEN_MAX_SECONDS bounds each. Both caps are per process (no Redis lease to leak when a
process dies): with several web processes a user may hold the per-user cap on each.
Notifications reach every web process through Redis pub/sub (inbox.publish), so any
process may hold a caller's stream.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Generator, Iterator
from typing import Any
from uuid import UUID

from flask import Response, current_app, request

from blueprints.mcp import protocol, resources
from blueprints.mcp.protocol import JsonRpcError
from services.identity import credentials
from services.notifications import inbox
from services.platform import errors
from services.platform.principal import Principal
from services.platform.runtime import runtime

log = logging.getLogger(__name__)

METHOD = "subscriptions/listen"
KEEPALIVE_SECONDS = 5.0  # also how soon a client gone is noticed (at a write)
WAIT_SECONDS = 1.0  # one wait on Redis; the stream's clock is checked between waits
# Set when this web process is told to stop: open streams end with their graceful result
# within one wait, so a stopping server never waits on them (nor kills its process for them).
STOPPING = threading.Event()
META_NOTIFICATION = "com.copytrade/notification"
BUSY_RETRY_SECONDS = 30

_lock = threading.Lock()
_open = 0  # streams this process holds now
_by_user: dict[UUID, int] = {}  # of those, each user's

PROCESS_FULL = "This server holds as many listen streams as it can; listen again later."
USER_FULL = ("You already hold as many listen streams as this server allows one user; "
             "close one, or listen again later.")


def open_streams() -> int:
    """How many listen streams this process holds now."""
    return _open


def take_slot(user_id: UUID) -> str | None:
    """Take a slot for ``user_id``'s stream; why not (the 429's message) when none is free."""
    global _open
    settings = runtime().settings
    with _lock:
        if _open >= settings.mcp_listen_streams:
            return PROCESS_FULL
        if _by_user.get(user_id, 0) >= settings.mcp_listen_streams_per_user:
            return USER_FULL
        _open += 1
        _by_user[user_id] = _by_user.get(user_id, 0) + 1
        return None


def give_slot(user_id: UUID) -> None:
    """Give back a slot taken with ``take_slot``."""
    global _open
    with _lock:
        _open -= 1
        left = _by_user.pop(user_id) - 1
        if left:
            _by_user[user_id] = left


def honored_filter(principal: Principal, requested: Any) -> dict[str, Any]:
    """The subset of ``requested`` (a SubscriptionFilter) this server delivers to
    ``principal``; ScopeRequired when it asks for the notifications without the scope."""
    if not isinstance(requested, dict):
        raise JsonRpcError(protocol.INVALID_PARAMS,
                           "subscriptions/listen needs params.notifications (an object).")
    uris = requested.get("resourceSubscriptions") or []
    if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
        raise JsonRpcError(protocol.INVALID_PARAMS,
                           "notifications.resourceSubscriptions must be a list of URIs.")
    if resources.NOTIFICATIONS_URI not in uris:
        return {}
    principal.require_scope(resources.SCOPE)
    return {"resourceSubscriptions": [resources.NOTIFICATIONS_URI]}


def frame(message: dict[str, Any]) -> str:
    """One SSE event carrying one JSON-RPC message."""
    return f"event: message\ndata: {json.dumps(message, separators=(',', ':'))}\n\n"


def _still_allowed(authorization: str | None) -> bool:
    """Whether the credential that opened the stream still resolves with the scope."""
    try:
        return credentials.resolve(authorization).has_scope(resources.SCOPE)
    except errors.CopytradeError:
        return False


def stream(principal: Principal, request_id: Any, params: dict[str, Any]) -> Response:
    """Answer a subscriptions/listen request with its SSE stream."""
    honored = honored_filter(principal, params.get("notifications"))
    meta = {protocol.META_SUBSCRIPTION_ID: request_id}
    ack = {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
           "params": {"_meta": meta, "notifications": honored}}
    done = {"jsonrpc": "2.0", "id": request_id,
            "result": {"resultType": "complete", "_meta": dict(meta)}}
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    if not honored:  # nothing we would ever send: acknowledge and end at once
        return Response(frame(ack) + frame(done), mimetype="text/event-stream",
                        headers=headers)
    refused = take_slot(principal.user_id)
    if refused:
        busy = errors.RateLimited(refused, retry_after=BUSY_RETRY_SECONDS)
        raise JsonRpcError(protocol.LISTEN_BUSY, busy.message, status=429,
                           data={**busy.to_dict(), "retry_after": BUSY_RETRY_SECONDS},
                           headers={"Retry-After": str(BUSY_RETRY_SECONDS)})
    try:
        listener = inbox.Listener(principal.user_id)
    except errors.CacheUnavailable:
        give_slot(principal.user_id)
        raise
    authorization = request.headers.get("Authorization")
    lifetime = runtime().settings.mcp_listen_max_seconds
    # The generator runs after the request's context is gone: take the app's JSON now.
    dumps = current_app.json.dumps

    released = threading.Event()

    def release() -> None:  # once: when the stream ends, or is closed before it started
        if not released.is_set():
            released.set()
            listener.close()
            give_slot(principal.user_id)

    def frames() -> Generator[str, None, None]:
        try:
            yield frame(ack)
            ends = time.monotonic() + lifetime
            quiet_since = time.monotonic()
            while time.monotonic() < ends and not STOPPING.is_set():
                try:
                    item = listener.next(WAIT_SECONDS)
                except errors.CacheUnavailable:
                    log.warning("a listen stream of user %s lost Redis; ending it",
                                principal.user_id)
                    return  # no graceful result: the client knows to listen again
                now = time.monotonic()
                if item is None:
                    if now - quiet_since >= KEEPALIVE_SECONDS:
                        quiet_since = now
                        yield ":\n\n"
                    continue
                if not _still_allowed(authorization):
                    break
                quiet_since = now
                yield frame({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                              "params": {"uri": resources.item_uri(item["id"]), "_meta": {
                                  **meta, META_NOTIFICATION: json.loads(dumps(item))}}})
            yield frame(done)
        finally:  # also when the client went away (the server closes the generator)
            release()

    return Response(StreamBody(frames(), release), mimetype="text/event-stream", headers=headers)


class StreamBody:
    """The stream's body: the server closes it when the response ends or the client goes,
    which releases the stream's slot even if it never started."""

    def __init__(self, frames: Generator[str, None, None], release: Any) -> None:
        self._frames = frames
        self._release = release

    def __iter__(self) -> Iterator[str]:
        return self._frames

    def close(self) -> None:
        """Stop the frames and release the slot and the Redis subscription."""
        self._frames.close()
        self._release()
