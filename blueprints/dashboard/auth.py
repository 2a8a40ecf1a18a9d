"""Sign-in by emailed code or one-time link, and sign-out (services/identity/auth.py, REST
schemas)."""

from __future__ import annotations

from flask import Response, render_template, request

from blueprints.dashboard import session as browser
from blueprints.dashboard.base import (
    bp,
    current_principal,
    form_text,
    go,
    parse,
    public,
    safe_next,
)
from schemas.auth import MagicRequestSchema, VerifyCodeSchema
from services.identity import auth
from services.platform import errors

HOME = "/dashboard"


def _next() -> str | None:
    return safe_next(request.values.get("next"))


def _link(token: str) -> auth.LinkInfo | None:
    return auth.link_info(token, browser.login_browser())


@bp.get("/login")
@public
def login() -> str:
    """The sign-in page; with ``?token=`` (the emailed link) a button redeems it.

    A link this browser did not ask for (login CSRF: someone else's link sent to you)
    names the account it signs in to and asks to confirm it, and never follows ``next``.
    """
    token = request.args.get("token", "")
    if not token:
        return render_template("dashboard/login.html", step="email", next=_next(),
                               mail=auth.codes_by_mail())
    info = _link(token)
    foreign = info is not None and not info.same_browser
    return render_template("dashboard/login.html", step="confirm" if foreign else "link",
                           token=token, account=info.email if info else None,
                           next=None if foreign else _next())


@bp.post("/login")
@public
def send_code() -> str:
    """Email a code and link (POST /api/auth/magic), then ask for the code."""
    body = parse(MagicRequestSchema(), {"email": request.form.get("email", "")})
    auth.request_login(body["email"], client_ip=request.remote_addr,
                       browser=browser.login_browser(create=True))
    return render_template("dashboard/_login_code.html", mail=auth.codes_by_mail(),
                           email=auth.normalize_email(
        body["email"]), next=_next())


@bp.post("/login/verify")
@public
def verify() -> Response:
    """Exchange the code for a session (POST /api/auth/verify-code) and sign in."""
    body = parse(VerifyCodeSchema(), {"email": request.form.get("email", ""),
                                      "code": request.form.get("code", "")})
    browser.sign_in(auth.verify_code(body["email"], body["code"], client_ip=request.remote_addr))
    return go(_next() or HOME)


@bp.post("/login/link")
@public
def redeem_link() -> Response:
    """Redeem the emailed link's token (POST /api/auth/magic with a token) and sign in.

    A link another browser asked for signs in only when the form confirms the account it
    names, and then lands on the home page whatever ``next`` says.
    """
    body = parse(MagicRequestSchema(), {"token": form_text("token") or ""})
    info = _link(body["token"])
    same_browser = info is not None and info.same_browser
    if info is not None and not same_browser and form_text("account") != info.email:
        raise errors.BadRequest(f"This link signs in as {info.email}, which this browser "
                                "did not ask for; open it again and confirm the account.")
    browser.sign_in(auth.redeem_link(body["token"]))
    return go((_next() if same_browser else None) or HOME)


@bp.post("/logout")
@public
def logout() -> Response:
    """Sign out of this browser (the session is ended on the server too)."""
    browser.sign_out()
    return go("/dashboard/login")


@bp.post("/logout/everywhere")
def logout_everywhere() -> Response:
    """Sign out of every browser and API client using a session of this account."""
    auth.sign_out_everywhere(current_principal())
    browser.sign_out()
    return go("/dashboard/login")
