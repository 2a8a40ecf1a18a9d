"""Sign-in by emailed code or one-time link, and sign-out (services/auth.py, REST schemas)."""

from __future__ import annotations

from flask import Response, current_app, render_template, request

from blueprints.dashboard import session as browser
from blueprints.dashboard.base import bp, form_text, go, parse, public, safe_next
from schemas.auth import MagicRequestSchema, VerifyCodeSchema
from services import auth

HOME = "/dashboard/configs"


def _next() -> str | None:
    return safe_next(request.values.get("next"))


@bp.get("/login")
@public
def login() -> str:
    """The sign-in page; with ``?token=`` (the emailed link) a button redeems it."""
    return render_template("dashboard/login.html", step="link" if request.args.get("token")
                           else "email", token=request.args.get("token", ""), next=_next())


@bp.post("/login")
@public
def send_code() -> str:
    """Email a code and link (POST /api/auth/magic), then ask for the code."""
    body = parse(MagicRequestSchema(), {"email": request.form.get("email", "")})
    auth.request_login(body["email"], current_app.config)
    return render_template("dashboard/_login_code.html", email=auth.normalize_email(
        body["email"]), next=_next())


@bp.post("/login/verify")
@public
def verify() -> Response:
    """Exchange the code for a session (POST /api/auth/verify-code) and sign in."""
    body = parse(VerifyCodeSchema(), {"email": request.form.get("email", ""),
                                      "code": request.form.get("code", "")})
    browser.sign_in(auth.verify_code(body["email"], body["code"], current_app.config))
    return go(_next() or HOME)


@bp.post("/login/link")
@public
def redeem_link() -> Response:
    """Redeem the emailed link's token (POST /api/auth/magic with a token) and sign in."""
    body = parse(MagicRequestSchema(), {"token": form_text("token") or ""})
    browser.sign_in(auth.redeem_link(body["token"], current_app.config))
    return go(_next() or HOME)


@bp.post("/logout")
@public
def logout() -> Response:
    """Sign out of this browser."""
    browser.sign_out()
    return go("/dashboard/login")
