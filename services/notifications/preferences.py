"""Which events reach which channel: per user, event type and channel (None: the app), with
thresholds (a minimum amount, chosen reasons). Without a row, the event's default holds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any
from uuid import UUID

from models.base import atomic
from models.notifications import NotificationChannel, NotificationPreference
from models.user import User
from services.notifications import catalogue
from services.platform import errors


@dataclass(frozen=True)
class Rule:
    """One effective preference: on or off, and its thresholds."""

    event_type: str
    channel_id: UUID | None
    enabled: bool
    min_amount: Decimal | None = None
    reasons: tuple[str, ...] = ()

    def admits(self, payload: Mapping[str, Any]) -> bool:
        """Whether an event with ``payload`` passes this rule."""
        if not self.enabled:
            return False
        kind = catalogue.event_type(self.event_type)
        if self.min_amount is not None and kind.amount_field:
            try:
                amount = Decimal(str(payload.get(kind.amount_field)))
            except (InvalidOperation, ValueError):
                amount = None
            if amount is None or not amount.is_finite() or amount < self.min_amount:
                return False
        if self.reasons and kind.reason_field:
            return str(payload.get(kind.reason_field)) in self.reasons
        return True


def _rule(row: NotificationPreference) -> Rule:
    return Rule(row.event_type, row.channel_id, row.enabled,
                Decimal(row.min_amount) if row.min_amount else None,
                tuple(r for r in (row.reasons or "").split(",") if r))


def rules_for(user: User | UUID, event_type: str) -> dict[UUID | None, Rule]:
    """The stored rules of one event type, by channel id (None: the app)."""
    return {row.channel_id: _rule(row) for row in NotificationPreference.select().where(
        NotificationPreference.user == user, NotificationPreference.event_type == event_type)}


def effective(stored: Mapping[UUID | None, Rule], event_type: str,
              channel_id: UUID | None) -> Rule:
    """The rule in force for one channel: the stored one, else the event's default."""
    return stored.get(channel_id) or Rule(event_type, channel_id,
                                          catalogue.event_type(event_type).default_on)


def list_preferences(user: User) -> list[dict[str, Any]]:
    """Every (channel, event type) pair of the user with the rule in force."""
    channels: list[UUID | None] = [None, *(c.id for c in NotificationChannel.select(
        NotificationChannel.id).where(NotificationChannel.user == user)
        .order_by(NotificationChannel.created_at))]
    found = []
    for name in catalogue.USER_EVENT_TYPES:
        stored = rules_for(user, name)
        for channel_id in channels:
            rule = effective(stored, name, channel_id)
            found.append({"event_type": name, "channel_id": channel_id,
                          "enabled": rule.enabled, "min_amount": rule.min_amount,
                          "reasons": list(rule.reasons)})
    return found


def set_preferences(user: User, items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Store rules (each: event_type, channel_id or None, enabled, min_amount, reasons)."""
    items = list(items)
    owned = {c.id for c in NotificationChannel.select(NotificationChannel.id)
             .where(NotificationChannel.user == user)}
    for index, item in enumerate(items):
        if item["event_type"] not in catalogue.USER_EVENT_TYPES:
            raise errors.ValidationFailed(fields={f"{index}.event_type": ["Unknown event type."]})
        if item.get("channel_id") is not None and item["channel_id"] not in owned:
            raise errors.ValidationFailed(fields={f"{index}.channel_id": ["No such channel."]})
    with atomic():
        for item in items:
            channel_id = item.get("channel_id")
            minimum = item.get("min_amount")
            values = {"enabled": bool(item.get("enabled", True)),
                      "min_amount": str(minimum) if minimum is not None else None,
                      "reasons": ",".join(item.get("reasons") or ()) or None}
            # NULL never equals NULL in a unique index: look the app's row up by hand.
            query = NotificationPreference.select().where(
                NotificationPreference.user == user,
                NotificationPreference.event_type == item["event_type"],
                NotificationPreference.channel.is_null() if channel_id is None
                else NotificationPreference.channel == channel_id)
            row = query.first()
            if row is None:
                NotificationPreference.create(user=user, channel=channel_id,
                                              event_type=item["event_type"], **values)
            else:
                NotificationPreference.update(**values).where(
                    NotificationPreference.id == row.id).execute()
    return list_preferences(user)
