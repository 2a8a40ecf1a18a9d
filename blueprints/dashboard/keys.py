"""API keys at /dashboard/keys: list, mint (secret shown once), revoke
(services/identity/keys.py)."""

from __future__ import annotations

from uuid import UUID

from flask import render_template, request

from blueprints.dashboard import session as browser
from blueprints.dashboard.base import bp, current_principal, form_int, form_text, parse, present
from schemas.keys import SCOPES, ApiKeyCreateRequestSchema, ApiKeyCreateResponseSchema, ApiKeySchema
from services.identity import agent_confirmations, auth, keys

# What each scope lets a key do, in plain words (SPEC "Authentication").
SCOPE_HINTS: dict[str, str] = {
    "read:account": "See your profile, balances and PnL summary.",
    "read:positions": "See your open and paper positions.",
    "read:trades": "See your trade history and fills.",
    "read:markets": "Search markets, order books and history; see your open orders.",
    "trade:execute": "Place orders; create, start and stop copy configs.",
    "trade:cancel": "Cancel your resting orders.",
    "wallet:write": "Move money: claim resolved positions and withdraw funds.",
}
EXPIRY_CHOICES = ((30, "30 days"), (90, "90 days (default)"), (365, "1 year"), (0, "Never"))


def _listing() -> list[dict]:
    return present(ApiKeySchema(many=True), keys.list_keys(current_principal()))


@bp.get("/keys")
def keys_page() -> str:
    """Every key of the user, and the form to mint one."""
    return render_template("dashboard/keys.html", keys=_listing(), scopes=SCOPES,
                           hints=SCOPE_HINTS, expiry_choices=EXPIRY_CHOICES,
                           confirmations=agent_confirmations.pending(current_principal().user))


@bp.post("/keys")
def create_key() -> str:
    """Mint a key (POST /api/keys); the answer shows its secret this once."""
    data: dict = {"name": request.form.get("name", ""),
                  "scopes": request.form.getlist("scopes")}
    days = form_int("expires_in_days")
    if days is not None or form_text("expires_in_days") is not None:
        data["expires_in_days"] = days
    body = parse(ApiKeyCreateRequestSchema(), data)
    caller = current_principal()
    step_up = (browser.require_step_up(caller, form_text("step_up_code"))
               if keys.MONEY_SCOPE in body["scopes"] else None)
    created = keys.create(caller, step_up_token=step_up, **body)
    shown = present(ApiKeyCreateResponseSchema(), {
        **{name: getattr(created.key, name) for name in (
            "id", "name", "prefix", "scope_list", "created_at", "last_used_at", "expires_at",
            "revoked_at", "confirm_money_tools")}, "secret": created.secret})
    return render_template("dashboard/_key_created.html", created=shown, keys=_listing())


@bp.post("/step-up")
def send_step_up_code() -> str:
    """Email a confirmation code for moving money (POST /api/auth/magic, purpose step_up)."""
    email = current_principal().user.email
    auth.request_step_up(email, client_ip=request.remote_addr)
    return render_template("_step_up_where.html", mail=auth.codes_by_mail(), email=email)


@bp.post("/keys/<uuid:key_id>/revoke")
def revoke_key(key_id: UUID) -> str:
    """Revoke one key (DELETE /api/keys/{id}); the refreshed list."""
    keys.revoke(current_principal(), key_id)
    return keys_table()


def keys_table(asking: UUID | None = None) -> str:
    """The keys table, fresh; ``asking`` names the key whose switch waits for a code."""
    return render_template("dashboard/_keys_table.html", keys=_listing(), asking=asking,
                           mail=auth.codes_by_mail(), email=current_principal().user.email)
