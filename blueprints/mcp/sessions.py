"""Legacy-era session ids: signed, stateless records of a negotiated protocol version.

2025-era clients that completed ``initialize`` get an ``Mcp-Session-Id``; it carries the
negotiated version and the user, signed with SECRET_KEY, so any web worker can read it
and nothing is stored. Sessions are optional: requests without one are served too (the
credential travels on every request anyway). A session id that does not verify, has
expired or belongs to another user answers 404, which tells the client to initialize
again. Clients cannot end sessions (DELETE answers 405); they simply lapse.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from itsdangerous import BadSignature, URLSafeTimedSerializer

SALT = "copytrade.mcp.session"
MAX_AGE_SECONDS = 30 * 24 * 3600


def _serializer(settings: Mapping[str, Any]) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings["SECRET_KEY"], salt=SALT)


def issue(settings: Mapping[str, Any], user_id: UUID, version: str) -> str:
    """A session id for ``user_id`` speaking ``version`` (visible ASCII only)."""
    return _serializer(settings).dumps({"u": str(user_id), "v": version,
                                        "n": secrets.token_hex(8)})


def version_of(settings: Mapping[str, Any], session_id: str, user_id: UUID) -> str | None:
    """The version the session negotiated; None when it is not a live session of the user."""
    try:
        payload = _serializer(settings).loads(session_id, max_age=MAX_AGE_SECONDS)
    except BadSignature:  # also SignatureExpired
        return None
    if not isinstance(payload, dict) or payload.get("u") != str(user_id):
        return None
    version = payload.get("v")
    return version if isinstance(version, str) else None
