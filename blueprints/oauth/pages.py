"""The minimal sign-in page of the consent flow (magic code), until the dashboard absorbs it.

``/oauth/login?next=/oauth/authorize?...``: enter an email, receive the 6-digit
code (services/auth.py), enter it; the browser is then signed in (session.py)
and sent back to ``next``, which must be an ``/oauth/authorize`` URL of this site.
"""

from __future__ import annotations

from flask import (
    Blueprint,
    Response,
    current_app,
    make_response,
    redirect,
    render_template,
    request,
)

from blueprints.oauth import session as browser
from services import auth, errors

bp = Blueprint("oauth_pages", __name__, url_prefix="/oauth")

AUTHORIZE_PREFIX = "/oauth/authorize"


def safe_next(raw: str | None) -> str | None:
    """``raw`` if it is an /oauth/authorize path on this site (no open redirect), else None."""
    if not raw or not raw.startswith(AUTHORIZE_PREFIX) or "\\" in raw:
        return None
    rest = raw[len(AUTHORIZE_PREFIX):]
    return raw if rest == "" or rest[0] in "?" else None


def page_headers(response: Response) -> Response:
    """Headers every sign-in and consent page carries: no framing, no caching, no referrer."""
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Content-Security-Policy"] = (
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; "
        "base-uri 'none'")
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def _render(status: int = 200, **context: object) -> Response:
    context.setdefault("step", "email")
    response = make_response(render_template(
        "oauth/login.html", csrf_token=browser.csrf_token(), next=request.args.get("next"),
        **context), status)
    return page_headers(response)


@bp.route("/login", methods=["GET", "POST"])
def login() -> Response:
    """Email a sign-in code, then verify it and go back to the authorization request."""
    target = safe_next(request.args.get("next"))
    if request.method == "GET":
        if browser.signed_in_user() is not None and target:
            return redirect(target)
        return _render()
    email = request.form.get("email", "")
    if not browser.csrf_ok():
        return _render(400, email=email,
                       error="The form expired; please try again.")
    settings = current_app.config
    try:
        if request.form.get("action") == "verify":
            session = auth.verify_code(email, request.form.get("code", ""), settings)
        else:
            auth.request_login(email, settings)
            return _render(step="code", email=auth.normalize_email(email))
    except errors.ValidationFailed:
        step = "code" if request.form.get("action") == "verify" else "email"
        return _render(400, step=step, email=email,
                       error="Enter a valid email address and the 6-digit code.")
    except errors.CopytradeError as exc:
        step = "code" if request.form.get("action") == "verify" else "email"
        return _render(400 if exc.status < 500 else 503, step=step, email=email,
                       error=exc.message)
    browser.sign_in(session)
    if target:
        return redirect(target)
    return _render(step="done", email=session.user.email)
