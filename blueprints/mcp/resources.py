"""MCP resources (2026-07-28): the caller's notifications, which ``subscriptions/listen``
streams (listen.py).

- ``copytrade://notifications``: the newest page of the caller's notifications (the
  ``list_notifications`` tool's first page), the resource a listen stream subscribes to;
- ``copytrade://notifications/<id>``: one of them; each new notification is announced on a
  listen stream as ``notifications/resources/updated`` with this sub-resource URI.

An unknown or foreign URI is -32602 with ``data.uri`` (2026-07-28 retired -32002). Both
need the ``read:account`` scope, as ``list_notifications`` does (403
``insufficient_scope`` otherwise). Contents are JSON text; third-party text inside is in the
untrusted-data envelope (services/notifications/catalogue.py).
"""

from __future__ import annotations

from typing import Any

from flask import current_app

from blueprints.mcp import protocol
from blueprints.mcp.protocol import JsonRpcError
from services.notifications import inbox
from services.platform import errors
from services.platform.principal import Principal

NOTIFICATIONS_URI = "copytrade://notifications"
ITEM_PREFIX = NOTIFICATIONS_URI + "/"
SCOPE = "read:account"
MIME = "application/json"
READ_TTL_MS = 0  # a notification list changes with every event: never fresh


def item_uri(notification_id: Any) -> str:
    """The URI of one notification."""
    return f"{ITEM_PREFIX}{notification_id}"


def readable(principal: Principal) -> bool:
    """Whether the credential may read (and listen to) the notifications."""
    return principal.has_scope(SCOPE)


def list_resources(principal: Principal) -> dict[str, Any]:
    """The ``resources/list`` result: the notification list, when the scopes permit it."""
    resources = []
    if readable(principal):
        resources.append({
            "uri": NOTIFICATIONS_URI, "name": "notifications", "title": "Your notifications",
            "description": "Your newest notifications (the first page of list_notifications). "
                           "Listen to it with subscriptions/listen (resourceSubscriptions) "
                           "to hear of each new one as copytrade://notifications/<id>.",
            "mimeType": MIME})
    # Varies with the credential: cacheable only per credential, briefly.
    return {"resources": resources, "ttlMs": 60_000, "cacheScope": "private"}


def _text(value: Any) -> str:
    # Through the app's JSON provider (datetimes, UUIDs, Decimals), as a REST body would be.
    return current_app.json.dumps(value)


def read(principal: Principal, params: dict[str, Any]) -> dict[str, Any]:
    """The ``resources/read`` result for one of our URIs; ScopeRequired without the scope."""
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise JsonRpcError(protocol.INVALID_PARAMS, "resources/read needs params.uri (a string).")
    if uri != NOTIFICATIONS_URI and not uri.startswith(ITEM_PREFIX):
        raise JsonRpcError(protocol.INVALID_PARAMS, f"Resource not found: {uri}",
                           data={"uri": uri})
    principal.require_scope(SCOPE)
    if uri == NOTIFICATIONS_URI:
        page = inbox.list_notifications(principal.user_id)
        body: Any = {"notifications": list(page.items), "limit": page.limit,
                     "offset": page.offset, "has_next": page.has_next}
    else:
        try:
            body = inbox.get(principal.user_id, uri[len(ITEM_PREFIX):])
        except errors.NotFound:
            raise JsonRpcError(protocol.INVALID_PARAMS, f"Resource not found: {uri}",
                               data={"uri": uri}) from None
    return {"contents": [{"uri": uri, "mimeType": MIME, "text": _text(body)}],
            "ttlMs": READ_TTL_MS, "cacheScope": "private"}
