"""Approved apps: the OAuth clients the user allowed, with their scopes; revoke
(services/oauth/tokens.py, the same calls as /api/oauth/approvals)."""

from __future__ import annotations

from uuid import UUID

from flask import render_template

from blueprints.dashboard.base import bp, current_principal, present
from blueprints.dashboard.keys import SCOPE_HINTS
from services.identity import agent_confirmations, auth


def _approvals() -> list[dict]:
    # Imported here: the OAuth package registers the svco_ resolver when imported, which
    # the app factory does when it mounts the OAuth surface.
    from schemas.oauth import ApprovalSchema
    from services.oauth import tokens as oauth

    return present(ApprovalSchema(many=True), oauth.list_approvals(current_principal()))


@bp.get("/apps")
def apps_page() -> str:
    """Every app the user allowed, with what it may do."""
    return render_template("dashboard/apps.html", approvals=_approvals(), hints=SCOPE_HINTS,
                           confirmations=agent_confirmations.pending(current_principal().user))


@bp.post("/apps/<uuid:approval_id>/revoke")
def revoke_app(approval_id: UUID) -> str:
    """Withdraw an approval (DELETE /api/oauth/approvals/{id}): its tokens stop working."""
    from services.oauth import tokens as oauth

    oauth.revoke_approval(current_principal(), approval_id)
    return apps_table()


def apps_table(asking: UUID | None = None) -> str:
    """The apps table, fresh; ``asking`` names the app whose switch waits for a code."""
    return render_template("dashboard/_apps_table.html", approvals=_approvals(),
                           hints=SCOPE_HINTS, asking=asking, mail=auth.codes_by_mail(),
                           email=current_principal().user.email)
