"""The trading account page: onboarding step by step until "ready" (services/wallets/onboarding.py),
and connecting an existing polymarket.com account (the dashboard is a session surface, so a
private key may come in here, and only here besides REST with a session)."""

from __future__ import annotations

from uuid import UUID

from flask import Response, render_template
from markupsafe import Markup

from blueprints.dashboard import refresh
from blueprints.dashboard import session as browser
from blueprints.dashboard.base import (
    bp,
    current_principal,
    form_text,
    go,
    is_htmx,
    parse,
    present,
)
from schemas.accounts import (
    ConnectAccountSchema,
    OnboardingSchema,
    WrapRequestSchema,
    WrapSchema,
)
from schemas.configs import ReadinessSchema
from schemas.fields import format_decimal
from services.wallets import collateral, deposits, onboarding, readiness, trading_accounts


def _status() -> dict:
    return present(OnboardingSchema(), onboarding.checked_status(current_principal().user))


@bp.get("/account")
def account_page() -> str:
    """The account, its onboarding steps (followed live) and the connect form; a ready
    account's deposits are looked at now (a deduplicated job)."""
    deposits.on_account_viewed(current_principal().user)
    return _account_page()


def _account_page(wrap_card: str = "") -> str:
    """The account's page, with the wrap card a request without JavaScript asked for."""
    return render_template("dashboard/account.html", onboarding=_status(),
                           wrap_card=Markup(wrap_card))


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
    """Connect an existing account (POST /api/trading-account/connect: with a fresh code, as
    a withdrawal), then start its onboarding."""
    body = parse(ConnectAccountSchema(), {
        "wallet_address": form_text("wallet_address") or "",
        "private_key": form_text("private_key") or "",
        "relayer_api_key": form_text("relayer_api_key"),
        "relayer_api_key_address": form_text("relayer_api_key_address")})
    caller = current_principal()
    browser.require_step_up(caller, form_text("step_up_code"))
    trading_accounts.connect(caller.user, **body)
    onboarding.start(caller.user)
    return render_template("dashboard/_onboarding.html", onboarding=_status())


def _wrap_fragment(wrap: dict | None = None) -> str:
    offer = collateral.offer(current_principal().user)
    if wrap is not None:
        offer["wrap"] = wrap
    usdce = offer["usdc_e"]
    offer.update(usdc_e_text=format_decimal(usdce) if usdce is not None else None,
                 usdc_e_waiting=bool(usdce and usdce > 0),
                 wrap=present(WrapSchema(), offer["wrap"]) if offer["wrap"] else None)
    return render_template("dashboard/_wrap.html", offer=offer)


@bp.get("/account/wrap")
def wrap_offer() -> str:
    """USDC.e waiting at the deposit wallet, with a button to wrap it, and the last wrap
    (asked without JavaScript, its link: the account's page with the card in place)."""
    return _wrap_fragment() if is_htmx() else _account_page(_wrap_fragment())


@bp.post("/account/wrap")
def start_wrap() -> str | Response:
    """Wrap the USDC.e shown (POST /api/trading-account/wrap), then follow it."""
    body = parse(WrapRequestSchema(), {"amount": form_text("amount") or ""})
    row = collateral.request_wrap(current_principal().user, body["amount"])
    if not is_htmx():  # posted without JavaScript: the account's page follows the wrap
        return go(f"/dashboard/account/wraps/{row.id}")
    return _wrap_fragment(collateral.describe(row))


@bp.get("/account/wraps/<uuid:wrap_id>")
def wrap_progress(wrap_id: UUID) -> Response:
    """One wrap's progress; the fragment polls itself until it is confirmed or failed (then
    the readiness card re-reads, through the ``wrap-confirmed`` event)."""
    wrap = collateral.describe(collateral.get(current_principal().user, wrap_id))
    if not is_htmx():  # a reload of the page a form without JavaScript was sent to
        return Response(_account_page(_wrap_fragment(wrap)))
    if wrap["status"] == "confirmed":  # pUSD arrived: the balance changed too
        return refresh.announce(_wrap_fragment(wrap), refresh.WRAP, refresh.BALANCE)
    return refresh.announce(_wrap_fragment(wrap))
