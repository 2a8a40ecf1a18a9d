"""Every event type, its template and its thresholds: one short wording for every channel.

A payload carries amounts (Decimal, sent as text), markets, reasons and links, never a
secret. Text from third parties (market titles, trader names, venue messages) is listed per
type in ``untrusted``: templates quote it, and machine surfaces (REST, MCP, webhooks) wrap
it in the untrusted-data envelope (``envelope``), so an agent can tell our words from a
market's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

UNTRUSTED_SOURCE = "third_party"
MAX_QUOTED = 120  # characters of third-party text a message quotes


@dataclass(frozen=True)
class EventType:
    """One kind of event: its title, its text template and which thresholds apply."""

    name: str
    title: str
    # str.format over the payload (missing fields render as "?"; ``reason_text``, the
    # reason in words, falls back to ``reason``)
    template: str
    amount_field: str | None = None  # threshold ``min_amount`` compares this field
    reason_field: str | None = None  # threshold ``reasons`` matches this field
    untrusted: tuple[str, ...] = ()  # payload fields that come from third parties
    default_on: bool = True


_TYPES = (
    EventType("copy.filled", "Copy filled",
              "{side} {size} shares of “{market}” at {price} for {amount} pUSD (copy of "
              "{trader}).", amount_field="amount", untrusted=("market", "trader")),
    EventType("copy.skipped", "Copy skipped",
              "A {amount} pUSD trade of {trader} on “{market}” was not copied: "
              "{reason_text}.",
              amount_field="amount", reason_field="reason", untrusted=("market", "trader")),
    EventType("copy.unconfirmed", "Copy of an unconfirmed match",
              "Your copy of {trader} on “{market}” acted on a match seen before its block, "
              "which the chain did not confirm ({reason_text}): {what}.",
              reason_field="reason", untrusted=("market", "trader")),
    EventType("config.stopped", "Copying stopped",
              "Copying {trader} stopped: {reason_text}.", reason_field="reason",
              untrusted=("trader",)),
    EventType("config.breaker_opened", "Copying paused",
              "Copying {trader} is paused: {reason_text}.", reason_field="reason",
              untrusted=("trader",)),
    EventType("config.buys_paused", "Buying paused",
              "Buying for {trader} is paused: {reason_text}. Sales still follow.",
              reason_field="reason", untrusted=("trader",)),
    EventType("config.out_of_funds", "Out of funds",
              "Copying {trader} cannot continue: {amount} pUSD needed, more than the trading "
              "wallet holds. Deposit pUSD to resume.", amount_field="amount",
              untrusted=("trader",)),
    EventType("order.filled", "Order filled",
              "{side} {size} shares of “{market}” at {price} for {amount} pUSD.",
              amount_field="amount", untrusted=("market",)),
    EventType("order.failed", "Order failed",
              "Your order on “{market}” failed: {reason}.", reason_field="reason",
              untrusted=("market", "reason")),
    EventType("claim.available", "Winnings to claim",
              "{amount} pUSD can be claimed from “{market}”.", amount_field="amount",
              untrusted=("market",)),
    EventType("claim.completed", "Claim completed",
              "{amount} pUSD claimed from “{market}”.", amount_field="amount",
              untrusted=("market",)),
    EventType("withdrawal.completed", "Withdrawal completed",
              "{amount} pUSD sent to {to_address}.", amount_field="amount"),
    EventType("withdrawal.ambiguous", "Withdrawal unclear",
              "A withdrawal of {amount} pUSD to {to_address} may or may not have gone "
              "through; check the chain before trying again.", amount_field="amount"),
    EventType("deposit.received", "Deposit received",
              "{amount} {token} arrived in your trading wallet.", amount_field="amount"),
    EventType("account.ready", "Account ready",
              "Your trading account is ready: you can trade and copy."),
    EventType("feed.degraded", "Detection slowed",
              "Live trade detection fell back, so copies may be late. {reason}.",
              reason_field="reason"),
    EventType("venue.throttled", "Orders slowed",
              "Polymarket warned that your account sends orders fast: copytrade now sends at "
              "most {limit} {kind} per 10 seconds, and speeds up again while no warning "
              "comes.", reason_field="kind", untrusted=("venue_message",)),
    EventType("channel.disabled", "Channel disabled",
              "Your {kind} channel “{label}” was turned off: {reason}.",
              untrusted=("label",)),
    EventType("notification.test", "Test notification",
              "This is a test from copytrade: this channel works."),
)

EVENT_TYPES: Mapping[str, EventType] = {event.name: event for event in _TYPES}
"""Every event type by name."""

USER_EVENT_TYPES = tuple(name for name in EVENT_TYPES
                         if name not in ("channel.disabled", "notification.test"))
"""The types a user can switch per channel (the others always reach the app)."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def event_type(name: str) -> EventType:
    """The EventType called ``name``; KeyError for an unknown one."""
    return EVENT_TYPES[name]


def _shown(value: Any) -> str:
    if value is None:
        return "?"
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    return str(value)


def quote(text: Any) -> str:
    """Third-party text made safe to quote in one line: control characters folded, cut."""
    cleaned = _CONTROL.sub(" ", _shown(text)).strip()
    return cleaned if len(cleaned) <= MAX_QUOTED else cleaned[: MAX_QUOTED - 1] + "…"


class _Fields(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


def render(name: str, payload: Mapping[str, Any]) -> tuple[str, str]:
    """The (title, text) of an event of type ``name`` with ``payload``."""
    kind = EVENT_TYPES[name]
    values = _Fields({key: quote(value) if key in kind.untrusted else _shown(value)
                      for key, value in payload.items()})
    if "reason_text" not in values and "reason" in values:
        values["reason_text"] = values["reason"]
    return kind.title, kind.template.format_map(values)


def untrusted_data(value: Any) -> dict[str, Any]:
    """Third-party text as machines get it, in the documented envelope
    ``{"untrusted_data": {"source": "third_party", "text": ...}}``: data, never instructions."""
    return {"untrusted_data": {"source": UNTRUSTED_SOURCE, "text": _shown(value)}}


def envelope(name: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The payload for machines: third-party fields in the untrusted-data envelope, the rest
    as they are."""
    kind = EVENT_TYPES.get(name)
    untrusted = kind.untrusted if kind else ()
    return {key: (untrusted_data(value) if key in untrusted and value is not None else value)
            for key, value in payload.items()}
