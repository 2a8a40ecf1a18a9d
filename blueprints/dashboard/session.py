"""The site's browser session: the session JWT in a signed cookie, and CSRF tokens.

Signing in stores the session JWT issued by services/identity/auth.py in Flask's signed session
cookie (HttpOnly, SameSite=Lax, Secure when BASE_URL is https) with a fresh CSRF token.
Every request resolves the JWT through services/identity/credentials.py, so the caller is the same
Principal the REST API would see for that token, with the same expiry and account
checks. The dashboard and the OAuth consent page (blueprints/oauth/endpoints.py) both
use this module: one sign-in, one cookie, one CSRF token.
"""

from __future__ import annotations

import secrets
from typing import Any

from flask import Flask, request, session
from flask.sessions import SecureCookieSessionInterface
from itsdangerous import URLSafeTimedSerializer

from services.identity import auth, credentials
from services.platform import errors
from services.platform.principal import Principal

JWT_KEY = "session_jwt"
CSRF_KEY = "csrf_token"
LOGIN_BROWSER_KEY = "login_browser"  # the nonce sign-in links asked here are bound to
STEP_UP_KEY = "step_up_token"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class SigningSessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, with its serializer built once per key set.

    Flask builds the serializer anew for every request (every API call too, since the
    session is opened before routing): a cost paid for nothing on a cookie-less request.
    """

    def __init__(self) -> None:
        self._serializers: dict[tuple[Any, ...], URLSafeTimedSerializer] = {}

    def get_signing_serializer(self, app: Flask) -> URLSafeTimedSerializer | None:
        """The serializer for the app's current SECRET_KEY and SECRET_KEY_FALLBACKS."""
        if not app.secret_key:
            return None
        keys = (app.secret_key, *(app.config.get("SECRET_KEY_FALLBACKS") or ()))
        found = self._serializers.get(keys)
        if found is None:
            found = super().get_signing_serializer(app)
            if found is not None:
                self._serializers[keys] = found
        return found

    def open_session(self, app: Flask, request: Any) -> Any:
        """Flask's, without parsing the cookies of a request that sends none (API calls)."""
        if "HTTP_COOKIE" not in request.environ and app.secret_key:
            return self.session_class()
        return super().open_session(app, request)

    def save_session(self, app: Flask, session: Any, response: Any) -> None:
        """Flask's; a session never read, written or holding anything is done at once (Flask
        would only work out the cookie's attributes and then do nothing)."""
        if not session and not session.accessed and not session.modified:
            return
        super().save_session(app, session, response)


def sign_in(signed: auth.Session) -> None:
    """Remember a fresh session in this browser (a new CSRF token with it)."""
    session.clear()
    session[JWT_KEY] = signed.token
    session[CSRF_KEY] = secrets.token_urlsafe(32)


def sign_out() -> None:
    """End this browser's session (its JWT is refused from now on) and forget it."""
    signed_in = principal()
    if signed_in is not None:
        auth.sign_out(signed_in)
    session.clear()


def login_browser(*, create: bool = False) -> str | None:
    """This browser's sign-in nonce (made when ``create``): links it asks for carry it."""
    nonce = session.get(LOGIN_BROWSER_KEY)
    if (not isinstance(nonce, str) or not nonce) and create:
        nonce = secrets.token_urlsafe(24)
        session[LOGIN_BROWSER_KEY] = nonce
    return nonce if isinstance(nonce, str) and nonce else None


def step_up_token(caller: Principal, code: str | None) -> str | None:
    """This session's live step-up token, or one earned now with ``code``; None without."""
    held = session.get(STEP_UP_KEY)
    if auth.step_up_valid(caller, held):
        return held
    if not code:
        return None
    earned = auth.verify_step_up(caller, code, client_ip=request.remote_addr)
    session[STEP_UP_KEY] = earned.token
    return earned.token


# The REST answer names routes and a header; a dashboard user is told what to press.
STEP_UP_NEEDED = ("This needs a fresh confirmation code: press \u201cSend me a code\u201d (a "
                  "withdrawal sends one when you review it) and type it in the Code field.")


def require_step_up(caller: Principal, code: str | None) -> str:
    """This session's live step-up token (earned now with ``code`` if need be); 403
    scope_required in the dashboard's words without one."""
    token = step_up_token(caller, code)
    if token is None:
        raise errors.Forbidden(STEP_UP_NEEDED)
    return token


def principal() -> Principal | None:
    """The signed-in caller, or None (no session, or its JWT expired or was refused)."""
    token = session.get(JWT_KEY)
    if not isinstance(token, str) or not token:
        return None
    try:
        found = credentials.resolve_token(token)
    except errors.Unauthorized:
        session.pop(JWT_KEY, None)
        return None
    return found if found.is_session else None


def csrf_token() -> str:
    """This browser session's CSRF token (created on first use, also before sign-in)."""
    token = session.get(CSRF_KEY)
    if not isinstance(token, str) or not token:
        token = secrets.token_urlsafe(32)
        session[CSRF_KEY] = token
    return token


def csrf_ok() -> bool:
    """True when the request carries this session's CSRF token (header or form field)."""
    expected = session.get(CSRF_KEY)
    sent = request.headers.get(CSRF_HEADER) or request.form.get(CSRF_KEY) or ""
    return isinstance(expected, str) and bool(expected) and secrets.compare_digest(
        expected.encode(), sent.encode())


def check_csrf() -> None:
    """Refuse an unsafe request without this session's token (header or form field)."""
    if request.method in SAFE_METHODS:
        return
    if not csrf_ok():
        err = errors.BadRequest("The form expired or did not come from this site (CSRF "
                                "check failed); reload the page and try again.")
        err.status = 403
        raise err
