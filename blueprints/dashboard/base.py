"""The dashboard blueprint and what every view shares: the caller, parsing, presenting.

Views stay thin (ARCHITECTURE rule 1): they parse the form with the REST schema of the
same action (``parse``), call the same service function, and present the result through
the REST response schema (``present``), so a page shows exactly what the API answers.
Unsafe requests carry the session's CSRF token; pages need a signed-in session.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from flask import Blueprint, Response, g, make_response, redirect, request, url_for
from marshmallow import Schema, ValidationError

from blueprints.dashboard import session as browser
from services.platform import chain_access, errors
from services.platform.principal import Principal

bp = Blueprint("dashboard", __name__, url_prefix="/dashboard")

# Endpoints a visitor without a session may reach (sign-in itself).
PUBLIC_ENDPOINTS: set[str] = set()
_SAFE_NEXT = re.compile(r"^/(dashboard|oauth/authorize)(/|\?|$)")
_UNSAFE_CHARS = re.compile(r"[\x00-\x1f\x7f]")


def public(view: Any) -> Any:
    """Mark a dashboard view as reachable before sign-in."""
    PUBLIC_ENDPOINTS.add(f"{bp.name}.{view.__name__}")
    return view


def safe_next(raw: str | None) -> str | None:
    """``raw`` when it is a dashboard or OAuth-consent path on this site (no open redirect)."""
    # Browsers read a backslash as "/" and drop tabs and newlines inside URLs, and a newline
    # cannot go into the Location header: none of them is in a path this site issued.
    if (not raw or "\\" in raw or raw.startswith("//") or _UNSAFE_CHARS.search(raw)
            or not _SAFE_NEXT.match(raw)):
        return None
    return raw


def is_htmx() -> bool:
    """True for a request htmx made (it wants a fragment, not a page)."""
    return request.headers.get("HX-Request") == "true"


def go(location: str) -> Response:
    """Send the browser to ``location``: HX-Redirect for htmx, 303 otherwise."""
    if is_htmx():
        response = make_response("", 200)
        response.headers["HX-Redirect"] = location
        return response
    return redirect(location, 303)


@bp.before_request
def guard() -> Response | None:
    """CSRF on every unsafe request; a session for every page but sign-in."""
    browser.check_csrf()
    if request.endpoint in PUBLIC_ENDPOINTS:
        return None
    caller = browser.principal()
    if caller is None:
        target = request.full_path.rstrip("?") if request.method == "GET" else "/dashboard"
        return go(url_for("dashboard.login") + "?next=" + quote(target, safe="/"))
    g.principal = caller
    return None


def current_principal() -> Principal:
    """The signed-in caller of this dashboard request."""
    caller = g.get("principal")
    if caller is None:
        raise errors.Unauthorized()
    return caller


@bp.app_context_processor
def layout_context() -> dict[str, Any]:
    """What the layout needs on every page: the CSRF token and who is signed in."""
    caller = g.get("principal")
    return {"csrf_token": browser.csrf_token, "signed_in_email": caller.user.email
            if caller is not None else None}


def _summary(fields: Mapping[str, Any]) -> str:
    return f"Validation failed: {', '.join(sorted(str(k) for k in fields))}."


def parse(schema: Schema, data: Mapping[str, Any]) -> dict[str, Any]:
    """Load ``data`` with the REST schema; ValidationFailed (400) naming each bad field."""
    try:
        return schema.load(data)
    except ValidationError as exc:
        messages = exc.messages if isinstance(exc.messages, dict) else {"_schema": exc.messages}
        raise errors.ValidationFailed(_summary(messages), fields=messages) from None


def present(schema: Schema, value: Any) -> Any:
    """``value`` as the REST API serialises it (decimal strings, ISO dates)."""
    return schema.dump(value)


def form_text(name: str) -> str | None:
    """A trimmed text field of the posted form; None when absent or blank."""
    value = request.form.get(name)
    if value is None:
        return None
    value = value.strip()
    return value or None


def form_int(name: str) -> Any:
    """An integer field: the int, None when blank, the raw text when not a number (the
    schema then names the field)."""
    value = form_text(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return value


@bp.app_template_global("tx_url")
def tx_url(tx_hash: str | None) -> str | None:
    """A transaction's page on the chain's public explorer, when it has one."""
    return chain_access.transaction_url(tx_hash)


@bp.app_template_global("now_iso")
def now_iso() -> str:
    """Now, in the API's date-time form (to compare with presented dates)."""
    return datetime.now(UTC).isoformat()


@bp.after_request
def page_headers(response: Response) -> Response:
    """Dashboard pages are never framed (clickjacking) and never cached (secrets, balances)."""
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Cache-Control", "no-store")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    return response
