"""Legacy-era session ids: signed, stateless records of a negotiated protocol version.

2025-era clients that completed ``initialize`` get an ``Mcp-Session-Id``; it carries the
negotiated version, the user and whether the client can show a form (it declared the
``elicitation`` capability: a confirmation is then asked as a server request), signed
with SECRET_KEY, so any web worker can read it and nothing is stored. Sessions are
optional: requests without one are served too (the credential travels on every request
anyway). A session id that does not verify, has expired or belongs to another user
answers 404, which tells the client to initialize again. Clients cannot end sessions
(DELETE answers 405); they simply lapse.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from uuid import UUID

from itsdangerous import BadSignature, URLSafeTimedSerializer

from services.platform.runtime import runtime

SALT = "copytrade.mcp.session"
MAX_AGE_SECONDS = 30 * 24 * 3600


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(runtime().settings.secret_key, salt=SALT)


@dataclass(frozen=True)
class Session:
    """What ``initialize`` settled: the version, and whether the client shows forms."""

    id: str
    version: str
    elicitation: bool = False


def issue(user_id: UUID, version: str, *, elicitation: bool = False) -> str:
    """A session id for ``user_id`` speaking ``version`` (visible ASCII only)."""
    payload = {"u": str(user_id), "v": version, "n": secrets.token_hex(8)}
    if elicitation:
        payload["e"] = 1
    return _serializer().dumps(payload)


def read(session_id: str, user_id: UUID) -> Session | None:
    """The session ``session_id`` names; None when it is not a live session of the user."""
    try:
        payload = _serializer().loads(session_id, max_age=MAX_AGE_SECONDS)
    except BadSignature:  # also SignatureExpired
        return None
    if not isinstance(payload, dict) or payload.get("u") != str(user_id):
        return None
    version = payload.get("v")
    if not isinstance(version, str):
        return None
    return Session(session_id, version, elicitation=payload.get("e") == 1)
