"""Copy configs: list at a glance, preview -> confirm, start/stop/edit/delete, the config page
with its PnL curve, decisions (copied and skipped, with reasons) and live executor status."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from flask import Response, render_template, request
from markupsafe import Markup

from blueprints.dashboard.base import (
    bp,
    current_principal,
    form_int,
    form_text,
    go,
    is_htmx,
    parse,
    present,
)
from schemas import rule_fields
from schemas.configs import (
    ConfigCreateRequestSchema,
    ConfigFieldsSchema,
    ConfigPnlSchema,
    ConfigPreviewRequestSchema,
    ConfigPreviewSchema,
    ConfigQualitySchema,
    ConfigStatusSchema,
    CopyConfigSchema,
    DecisionSchema,
)
from schemas.fields import format_decimal
from schemas.screening import ScreeningSchema
from services.copying import configs, leaderboard, pnl_history
from services.platform import errors

DECISIONS_SHOWN = 50
QUALITY_PERIOD = "7d"  # the config page's execution-quality window
# The stages the latency chart draws (detection, in whole seconds of the venue's clock,
# would dwarf them; it is in the figures table).
CHART_STAGES = ("decision", "placement", "ack", "settlement", "taker_delay")


def _config_form() -> dict[str, Any]:
    """The editable fields as the JSON body of the REST call would carry them: each
    declared rule from its control (blank text is off, an unticked box false)."""
    data: dict[str, Any] = {
        "target_name": request.form.get("target_name", "").strip(),
        "paper_trading": request.form.get("paper_trading") == "true",
    }
    for rule in rule_fields.RULES:
        if rule.widget == "check":
            data[rule.name] = request.form.get(rule.name) == "true"
        elif rule.widget == "list":
            text = request.form.get(rule.name) or ""
            data[rule.name] = [w.strip() for w in text.split(",") if w.strip()]
        elif rule.widget == "bands":
            data[rule.name] = _bands(request.form.get(rule.name) or "")
        elif rule.widget == "number":
            data[rule.name] = form_int(rule.name)
        else:
            data[rule.name] = form_text(rule.name)
    # Only the sizing mode chosen is sent: a multiplier left in the form is not a fixed
    # amount's, nor a fixed amount the other modes' (the service clears what is stored).
    if data.get("sizing_mode") == "fixed_usdc":
        data["size_multiplier"] = None
    else:
        data["fixed_usdc"] = None
    # A blank rule that is never off keeps its value; a blank one that can be off clears it.
    return {k: v for k, v in data.items()
            if v is not None or (k in rule_fields.BY_NAME and rule_fields.BY_NAME[k].nullable)}


@bp.app_template_global()
def rule_form(values: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The config form's sections: each declared rule with the text or tick it shows, and
    whether a section holds a rule set away from its default (shown open)."""
    values = values or {}
    groups = []
    for key, title in rule_fields.GROUPS:
        rows, changed = [], False
        for rule in rule_fields.in_group(key):
            value = values.get(rule.name)
            if rule.sizing == "multiplier" and values.get("sizing_mode") == "fixed_usdc":
                value = None  # a fixed amount per copy multiplies nothing
            checked = value in (True, "true") or (value is None and rule.default is True)
            text = _shown(rule, value)
            rows.append({"rule": rule, "text": text, "checked": checked})
            changed = changed or (text not in ("", _shown(rule, rule.default))
                                  if rule.widget != "check" else checked != bool(rule.default))
        groups.append({"title": title, "rows": rows, "changed": changed})
    return groups


def _bands(text: str) -> Any:
    """``max price: bps`` pairs, comma-separated, as the API's bands; the text itself when
    it is not such pairs (the schema then names the field)."""
    bands = []
    for pair in (p.strip() for p in text.split(",") if p.strip()):
        top, _, bps = pair.partition(":")
        if not bps.strip().isdigit():
            return text
        bands.append({"max_price": top.strip(), "max_deviation_bps": int(bps)})
    return bands


def _shown(rule: rule_fields.RuleField, value: Any) -> str:
    """A rule's value as its control shows it (a list comma-separated, a choice and the
    bands their default when unset)."""
    if value is None:  # a new config: a choice and the bands show their default
        if rule.widget == "select":
            return rule.default
        value = rule.default if rule.widget == "bands" else None
        if value is None:
            return ""
    if rule.widget == "list" and not isinstance(value, str):
        return ", ".join(str(v) for v in value)
    if rule.widget == "bands" and not isinstance(value, str):
        return ", ".join(f"{b['max_price']}: {b['max_deviation_bps']}" for b in value)
    return str(value)


def _glance(config: Any) -> dict[str, Any]:
    """A config with what the list shows beside it: running, last detection, last error."""
    user = current_principal().user
    shown = present(CopyConfigSchema(), config)
    try:
        shown["status"] = present(ConfigStatusSchema(), configs.status(user, config.id))
    except errors.Unavailable:  # Redis down: the list still shows the config itself
        shown["status"] = None
    return shown


@bp.get("/configs")
def configs_page() -> str:
    """Every config with its status at a glance."""
    rows = [_glance(c) for c in configs.list_configs(current_principal().user)]
    return render_template("dashboard/configs.html", configs=rows)


@bp.get("/configs/new")
def new_config() -> str:
    """The create form (preview first); from a screened trader's "Copy this trader", what
    its replay expects beside it."""
    target = request.args.get("target_address") or ""
    expected = leaderboard.screened(target) if target else None
    return render_template("dashboard/config_new.html", values=request.args,
                           expected=present(ScreeningSchema(), expected) if expected else None)


@bp.post("/configs/preview")
def preview_config() -> str:
    """Preview the config (POST /api/configs/preview); the answer asks to confirm."""
    data = {"target_address": form_text("target_address") or "", **_config_form()}
    body = parse(ConfigPreviewRequestSchema(), data)
    shown = present(ConfigPreviewSchema(), configs.preview(current_principal().user, body))
    html = render_template("dashboard/_config_preview.html", preview=shown)
    if is_htmx():
        return html
    # Posted without JavaScript: the form's page again, as filled in, the preview below it.
    return render_template("dashboard/config_new.html", values=request.form, expected=None,
                           preview=Markup(html))


@bp.post("/configs")
def create_config() -> Response:
    """Create from the confirmed preview (POST /api/configs); go to the config's page."""
    body = parse(ConfigCreateRequestSchema(), {"preview_id": form_text("preview_id") or ""})
    config = configs.create(current_principal().user, body)
    return go(f"/dashboard/configs/{config.id}")


def _page_context(config_id: str) -> dict[str, Any]:
    user = current_principal().user
    config = configs.get(user, config_id)
    page = configs.decisions(user, config.id, limit=DECISIONS_SHOWN)
    series = pnl_history.config_series(user, config.id)
    chart = {"at": [int(p["at"].timestamp()) for p in series],
             "total": [format_decimal(p["total_pnl"]) for p in series],
             "realized": [format_decimal(p["realized_pnl"]) for p in series]}
    quality = present(ConfigQualitySchema(), configs.quality(user, config.id, QUALITY_PERIOD))
    return {
        "config": present(CopyConfigSchema(), config),
        "status": present(ConfigStatusSchema(), configs.status(user, config.id)),
        "decisions": present(DecisionSchema(many=True), page.items),
        "pnl": present(ConfigPnlSchema(), configs.pnl(user, config.id)),
        "chart_json": json.dumps(chart),
        "quality": quality,
        "quality_json": json.dumps(_quality_chart(quality)),
    }


def _quality_chart(quality: dict[str, Any]) -> dict[str, Any]:
    """The quality charts' data: each stage's delay per filled copy over time (epoch s,
    ms or null) and the slippage histogram's buckets."""
    points = quality["points"]
    histogram = quality["histogram"]
    counts = {b["from_bps"]: b["count"] for b in histogram}
    step = histogram[0]["to_bps"] - histogram[0]["from_bps"] if histogram else 1
    # Every bucket between the lowest and the highest drawn, empty ones as 0: bars of one
    # width on a readable axis.
    buckets = list(range(min(counts), max(counts) + 1, step)) if counts else []
    return {"at": [int(datetime.fromisoformat(p["at"]).timestamp()) for p in points],
            "stages": {name: [p[f"{name}_ms"] for p in points] for name in CHART_STAGES},
            "buckets": buckets, "counts": [counts.get(edge, 0) for edge in buckets],
            "step": step}


@bp.get("/configs/<config_id>")
def config_page(config_id: str) -> str:
    """One config: settings, controls, PnL over time, decisions, live executor status."""
    return render_template("dashboard/config.html", **_page_context(config_id))


@bp.get("/configs/<config_id>/status")
def config_status(config_id: str) -> str:
    """The executor-status fragment the config page polls (GET /api/configs/{id}/status)."""
    user = current_principal().user
    config = present(CopyConfigSchema(), configs.get(user, config_id))
    status = present(ConfigStatusSchema(), configs.status(user, config_id))
    return render_template("dashboard/_config_status.html", config=config, status=status)


@bp.get("/configs/<config_id>/decisions")
def config_decisions(config_id: str) -> str:
    """The decisions table fragment (copied and skipped trades), refreshed while copying."""
    page = configs.decisions(current_principal().user, config_id, limit=DECISIONS_SHOWN)
    return render_template("dashboard/_decisions.html", config_id=config_id,
                           decisions=present(DecisionSchema(many=True), page.items))


@bp.post("/configs/<config_id>/start")
def start_config(config_id: str) -> str:
    """Start copying (POST /api/configs/{id}/start)."""
    user = current_principal().user
    config = present(CopyConfigSchema(), configs.start(user, config_id))
    status = present(ConfigStatusSchema(), configs.status(user, config_id))
    return render_template("dashboard/_config_status.html", config=config, status=status)


@bp.post("/configs/<config_id>/stop")
def stop_config(config_id: str) -> str:
    """Stop copying (POST /api/configs/{id}/stop)."""
    user = current_principal().user
    config = present(CopyConfigSchema(), configs.stop(user, config_id))
    status = present(ConfigStatusSchema(), configs.status(user, config_id))
    return render_template("dashboard/_config_status.html", config=config, status=status)


@bp.get("/configs/<config_id>/edit")
def edit_config(config_id: str) -> str:
    """The edit form, filled with the config's values."""
    config = present(CopyConfigSchema(), configs.get(current_principal().user, config_id))
    return render_template("dashboard/config_edit.html", config=config)


@bp.post("/configs/<config_id>/edit")
def update_config(config_id: str) -> Response:
    """Save edits (PUT /api/configs/{id}); back to the config's page."""
    body = parse(ConfigFieldsSchema(), _config_form())
    config = configs.update(current_principal().user, config_id, body)
    return go(f"/dashboard/configs/{config.id}")


@bp.delete("/configs/<config_id>")
def delete_config(config_id: str) -> Response:
    """Stop and delete (DELETE /api/configs/{id}); back to the list."""
    configs.delete(current_principal().user, config_id)
    return go("/dashboard/configs")
