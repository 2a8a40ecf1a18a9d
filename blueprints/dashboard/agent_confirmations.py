"""Agents' money-moving calls awaiting a person (issue 47): the pending list with Approve and
Decline, and the per-key / per-app switch (services/identity/agent_confirmations.py)."""

from __future__ import annotations

from uuid import UUID

from flask import render_template, request

from blueprints.dashboard.base import bp, current_principal
from blueprints.dashboard.keys import keys_table
from services.identity import agent_confirmations


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


@bp.post("/keys/<uuid:key_id>/confirmations")
def switch_key(key_id: UUID) -> str:
    """Turn confirmations on or off for one key; the refreshed keys table."""
    agent_confirmations.set_required(current_principal(), "api_key", key_id,
                                     request.form.get("on") == "1")
    return keys_table()


@bp.post("/apps/<uuid:approval_id>/confirmations")
def switch_app(approval_id: UUID) -> str:
    """Turn confirmations on or off for one approved app; the refreshed apps table."""
    from blueprints.dashboard.apps import apps_table

    agent_confirmations.set_required(current_principal(), "oauth", approval_id,
                                     request.form.get("on") == "1")
    return apps_table()
