"""Shared setups (issue 45) on the dashboard: the config page's "Share these rules" section
(make a link, copy it, revoke it, show results or not), the page a link opens, and "Use
these rules", which opens the new-config form filled with them."""

from __future__ import annotations

from typing import Any

from flask import render_template, request

from blueprints.dashboard.base import bp, current_principal, parse, present
from schemas.configs import ConfigFieldsSchema
from schemas.shared_configs import (
    SharedConfigSchema,
    ShareLinkSchema,
    ShareRequestSchema,
)
from services.copying import rule_labels
from services.copying.configs import sharing


def _section(config_id: str, link: dict[str, Any] | None = None) -> str:
    """The config page's share section: the new link once, else whether one is live."""
    state = sharing.link_of(current_principal().user, config_id)
    return render_template("dashboard/_config_share.html", config_id=config_id,
                           link=present(ShareLinkSchema(), link) if link else None,
                           state=state)


@bp.get("/configs/<config_id>/share")
def config_share(config_id: str) -> str:
    """The share section, loaded by the config page."""
    return _section(config_id)


@bp.post("/configs/<config_id>/share")
def share_config(config_id: str) -> str:
    """Make a new link (POST /api/configs/{id}/share); shown this once."""
    body = parse(ShareRequestSchema(), {"show_results": request.form.get("show_results")
                                        == "true"})
    link = sharing.share(current_principal().user, config_id, **body)
    return _section(config_id, link)


@bp.delete("/configs/<config_id>/share")
def revoke_share(config_id: str) -> str:
    """Revoke the link (DELETE /api/configs/{id}/share)."""
    sharing.revoke(current_principal().user, config_id)
    return _section(config_id)


@bp.get("/shared/<token>")
def shared_setup(token: str) -> str:
    """What a link shows (GET /api/shared-configs/{token}), the rules in words."""
    setup = sharing.read(token)
    return render_template("dashboard/shared.html", token=token,
                           shown=present(SharedConfigSchema(), setup),
                           lines=rule_labels.described(setup["rules"]))


@bp.get("/shared/<token>/use")
def use_shared_setup(token: str) -> str:
    """The new-config form filled with a link's trader and rules (paper trading ticked)."""
    shown = sharing.read(token)
    values = {"target_address": shown["target_address"],
              **present(ConfigFieldsSchema(), shown["rules"])}
    return render_template("dashboard/config_new.html", values=values, shared=True)
