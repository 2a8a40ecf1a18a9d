"""The browser sign-in used by the consent flow: a signed cookie session and CSRF tokens.

The cookie (Flask's session, signed with SECRET_KEY, HttpOnly, SameSite=Lax)
holds the user id and when they signed in; it lasts SIGN_IN_TTL like a session
JWT. Every form carries a per-session CSRF token. The keys are the dashboard's
(blueprints/dashboard/session.py), so signing in on either signs in both.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from uuid import UUID

from flask import request, session

from models.user import User
from services import auth

SIGN_IN_TTL = timedelta(hours=24)
JWT_KEY = "session_jwt"  # what the dashboard reads: one sign-in serves both
USER_KEY = "user_id"
SIGNED_IN_AT_KEY = "signed_in_at"
CSRF_KEY = "csrf_token"


def sign_in(signed: auth.Session) -> None:
    """Remember a fresh sign-in in this browser (a fresh CSRF token with it)."""
    session.clear()
    session[JWT_KEY] = signed.token
    session[USER_KEY] = str(signed.user.id)
    session[SIGNED_IN_AT_KEY] = int(datetime.now(UTC).timestamp())
    session[CSRF_KEY] = secrets.token_urlsafe(32)


def signed_in_user() -> User | None:
    """The user signed in in this browser, or None (also when the sign-in is too old)."""
    raw_id = session.get(USER_KEY)
    signed_at = session.get(SIGNED_IN_AT_KEY)
    if not raw_id or not isinstance(signed_at, int):
        return None
    if datetime.now(UTC) - datetime.fromtimestamp(signed_at, UTC) > SIGN_IN_TTL:
        return None
    try:
        return User.get_or_none(User.id == UUID(raw_id))
    except ValueError:
        return None


def csrf_token() -> str:
    """This browser session's CSRF token (created on first use)."""
    token = session.get(CSRF_KEY)
    if not token:
        token = secrets.token_urlsafe(32)
        session[CSRF_KEY] = token
    return token


def csrf_ok() -> bool:
    """True when the posted form carries this browser session's CSRF token."""
    expected = session.get(CSRF_KEY)
    sent = request.form.get(CSRF_KEY, "")
    return bool(expected) and secrets.compare_digest(str(expected), sent)
