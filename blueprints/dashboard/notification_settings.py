"""Channels and preferences at /dashboard/notifications/settings: add a channel (a webhook's
secret and a Telegram link code shown once), test, rotate a webhook's secret, remove; which
events reach each channel, with thresholds. The same services and schemas as
/api/notifications/channels and /preferences; writes need a session (the API's JWT-only
rule), which every dashboard caller is, checked here as the API's gate does."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import render_template, request

from blueprints.dashboard.base import bp, current_principal, form_text, parse, present
from schemas.notifications import (
    ChannelCreateRequestSchema,
    ChannelCreateResponseSchema,
    ChannelSchema,
    DeliverySchema,
    PreferencesRequestSchema,
    RotatedSecretSchema,
)
from services.notifications import catalogue, channels, preferences, providers
from services.platform.principal import Principal


def _writer() -> Principal:
    """The caller, who must hold a session to change channels (as the API requires)."""
    principal = current_principal()
    principal.require_session()
    return principal


def _listing() -> list[dict[str, Any]]:
    return present(ChannelSchema(many=True),
                   [channels.as_dict(c) for c in channels.list_channels(current_principal().user)])


def _rules(channel_id: str | None) -> list[dict[str, Any]]:
    """One channel's rules (None: the app), with what each event's thresholds can be."""
    wanted = None if channel_id is None else UUID(channel_id)
    rows = []
    for rule in preferences.list_preferences(current_principal().user):
        if rule["channel_id"] != wanted:
            continue
        kind = catalogue.event_type(rule["event_type"])
        rows.append({**rule, "title": kind.title, "has_amount": kind.amount_field is not None,
                     "has_reason": kind.reason_field is not None})
    return rows


def _context(**extra: Any) -> dict[str, Any]:
    listed = _listing()
    kinds = providers.all_providers()  # the form's kinds, labels and hints: the provider table
    labels = {provider.kind: provider.label for provider in kinds}
    sections = [{"key": "app", "title": "In the app", "channel_id": None}] + [
        {"key": c["id"], "channel_id": c["id"],
         "title": labels[c["kind"]] + (f": {c['label']}" if c["label"] else "")}
        for c in listed]
    return {"channels": listed, "kinds": kinds, "kind_labels": labels,
            "signing_kinds": {provider.kind for provider in kinds if provider.signs},
            "sections": sections,
            "rules": {s["key"]: _rules(s["channel_id"]) for s in sections}, **extra}


@bp.get("/notifications/settings")
def notification_settings() -> str:
    """The user's channels and which events reach each."""
    return render_template("dashboard/notification_settings.html", **_context())


def _channels_card(**extra: Any) -> str:
    return render_template("dashboard/_channels.html", **_context(**extra))


@bp.post("/notifications/channels")
def add_channel() -> str:
    """Add a channel (POST /api/notifications/channels); shows its secret or code once."""
    principal = _writer()
    body = parse(ChannelCreateRequestSchema(), {
        "kind": request.form.get("kind", ""), "url": form_text("url"),
        "label": request.form.get("label", "")})
    added = channels.add(principal.user, body["kind"], url=body.get("url"), label=body["label"])
    shown = present(ChannelCreateResponseSchema(), {
        **channels.as_dict(added.channel), "secret": added.secret,
        "link_code": added.link_code, "link_url": added.link_url})
    return _channels_card(created=shown)


@bp.post("/notifications/channels/<uuid:channel_id>/remove")
def remove_channel(channel_id: UUID) -> str:
    """Remove a channel (DELETE /api/notifications/channels/{id})."""
    channels.remove(_writer().user, channel_id)
    return _channels_card()


@bp.post("/notifications/channels/<uuid:channel_id>/test")
def test_channel(channel_id: UUID) -> str:
    """Send a test event now (POST .../{id}/test); the delivery's outcome."""
    delivery = present(DeliverySchema(), channels.send_test(_writer().user, channel_id))
    return render_template("dashboard/_channel_tested.html", delivery=delivery,
                           channel_id=channel_id)


@bp.post("/notifications/channels/<uuid:channel_id>/rotate")
def rotate_channel_secret(channel_id: UUID) -> str:
    """A new webhook secret, shown once (POST .../{id}/rotate-secret)."""
    rotated = present(RotatedSecretSchema(), channels.rotate_secret(_writer().user, channel_id))
    return render_template("dashboard/_channel_secret.html", rotated=rotated,
                           channel_id=channel_id)


@bp.post("/notifications/preferences")
def save_preferences() -> str:
    """Store one channel's rules (PUT /api/notifications/preferences): each event on or off,
    at least an amount, only some reasons."""
    principal = _writer()
    channel = form_text("channel_id")
    items = []
    for name in catalogue.USER_EVENT_TYPES:
        reasons = [r.strip() for r in (request.form.get(f"reasons:{name}") or "").split(",")
                   if r.strip()]
        items.append({"event_type": name, "channel_id": channel,
                      "enabled": request.form.get(f"on:{name}") == "1",
                      "min_amount": form_text(f"min:{name}"), "reasons": reasons})
    body = parse(PreferencesRequestSchema(), {"preferences": items})
    preferences.set_preferences(principal.user, body["preferences"])
    return render_template("dashboard/_preferences.html", key=channel or "app",
                           channel_id=channel, rules=_rules(channel), saved=True)
