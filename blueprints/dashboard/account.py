"""The trading account page: onboarding step by step until "ready" (services/onboarding.py),
and connecting an existing polymarket.com account (the dashboard is a session surface, so a
private key may come in here, and only here besides REST with a session)."""

from __future__ import annotations

from flask import render_template

from blueprints.dashboard.base import bp, current_principal, form_text, parse, present
from schemas.accounts import ConnectAccountSchema, OnboardingSchema
from schemas.configs import ReadinessSchema
from services import onboarding, readiness, trading_accounts


def _status() -> dict:
    return present(OnboardingSchema(), onboarding.status(current_principal().user))


@bp.get("/account")
def account_page() -> str:
    """The account, its onboarding steps (followed live) and the connect form."""
    return render_template("dashboard/account.html", onboarding=_status())


@bp.get("/account/onboarding")
def onboarding_progress() -> str:
    """The steps fragment; it polls itself until onboarding is ready or failed."""
    return render_template("dashboard/_onboarding.html", onboarding=_status())


@bp.post("/account/onboarding")
def start_onboarding() -> str:
    """Start onboarding, or retry it from its failed step (POST /api/trading-account/...)."""
    onboarding.start(current_principal().user)
    return render_template("dashboard/_onboarding.html", onboarding=_status())


@bp.get("/account/readiness")
def account_readiness() -> str:
    """What still blocks live trading, by name (GET /api/helpers/trading-readiness)."""
    ready = present(ReadinessSchema(), readiness.readiness(current_principal().user))
    return render_template("dashboard/_readiness.html", readiness=ready)


@bp.post("/account/connect")
def connect_account() -> str:
    """Connect an existing account, then start its onboarding."""
    body = parse(ConnectAccountSchema(), {
        "wallet_address": form_text("wallet_address") or "",
        "private_key": form_text("private_key") or "",
        "relayer_api_key": form_text("relayer_api_key"),
        "relayer_api_key_address": form_text("relayer_api_key_address")})
    user = current_principal().user
    trading_accounts.connect(user, **body)
    onboarding.start(user)
    return render_template("dashboard/_onboarding.html", onboarding=_status())
