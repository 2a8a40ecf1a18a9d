"""Agents' money-moving calls awaiting a person (issue 47): the pending list with Approve and
Decline, and the per-key / per-app switch (services/identity/agent_confirmations.py)."""

from __future__ import annotations

from uuid import UUID

from flask import render_template, request

from blueprints.dashboard import session as browser
from blueprints.dashboard.base import bp, current_principal, form_text
from blueprints.dashboard.keys import keys_table
from services.identity import agent_confirmations, auth


def pending_section() -> str:
    """The "Pending agent confirmations" card, fresh."""
    rows = agent_confirmations.pending(current_principal().user)
    return render_template("dashboard/_agent_confirmations.html", confirmations=rows)


@bp.post("/agent-confirmations/<uuid:confirmation_id>/<any(approve, decline):choice>")
def decide(confirmation_id: UUID, choice: str) -> str:
    """Approve or decline one pending call; the refreshed list."""
    agent_confirmations.decide(current_principal().user, confirmation_id,
                               approve=choice == "approve", by="dashboard")
    return pending_section()


def _switch(kind: str, credential_id: UUID) -> UUID | None:
    """Switch one credential's confirmations as the form says; the id still waiting for a
    code (the table shows the code field on its row), or None once switched."""
    caller = current_principal()
    on = request.form.get("on") == "1"
    token = None
    if not on:
        # Stopping the questions lets the agent move money alone: the fresh code REST asks
        # for (PATCH /api/keys/{id}); sent now unless this session proved one lately.
        token = browser.step_up_token(caller, form_text("step_up_code"))
        if token is None:
            agent_confirmations.owned(caller, kind, credential_id)  # no code for a 404
            auth.request_step_up(caller.user.email, client_ip=request.remote_addr,
                                 purpose="letting an agent move money without asking you")
            return credential_id
    agent_confirmations.switch(caller, kind, credential_id, on, token)
    return None


@bp.post("/keys/<uuid:key_id>/confirmations")
def switch_key(key_id: UUID) -> str:
    """Turn confirmations on or off for one key (off with a fresh code); the keys table."""
    return keys_table(asking=_switch("api_key", key_id))


@bp.post("/apps/<uuid:approval_id>/confirmations")
def switch_app(approval_id: UUID) -> str:
    """Turn confirmations on or off for one approved app (off with a fresh code); the apps
    table."""
    from blueprints.dashboard.apps import apps_table

    return apps_table(asking=_switch("oauth", approval_id))
