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

from services.platform import numbers
from services.platform.addresses import short_address

UNTRUSTED_SOURCE = "third_party"
MAX_QUOTED = 120  # characters of third-party text a message quotes


@dataclass(frozen=True)
class EventType:
    """One kind of event: its title, its text template and which thresholds apply."""

    name: str
    title: str
    # str.format over the payload in words (``words``): amounts as money with their token,
    # prices to the tick, shares to 2 decimals, the market by its question and outcome.
    # A part in [brackets] is left out when a field in it is unknown, so a sentence never
    # shows a placeholder; ``reason_text``, the reason in words, falls back to ``reason``.
    template: str
    amount_field: str | None = None  # threshold ``min_amount`` compares this field
    reason_field: str | None = None  # threshold ``reasons`` matches this field
    untrusted: tuple[str, ...] = ()  # payload fields that come from third parties
    default_on: bool = True


_TYPES = (
    EventType("copy.filled", "Copy filled",
              "{side} {size} shares of {market} at {price}[ for {amount}] (copy of {trader}).",
              amount_field="amount", untrusted=("market", "market_title", "trader")),
    EventType("copy.skipped", "Copy skipped",
              "A [{amount} ]trade of {trader} on {market} was not copied: {reason_text}.",
              amount_field="amount", reason_field="reason",
              untrusted=("market", "market_title", "trader")),
    EventType("copy.unconfirmed", "Copy of an unconfirmed match",
              "Your copy of {trader} on {market} acted on a match seen before its block, "
              "which the chain did not confirm ({reason_text}): {what}.",
              reason_field="reason", untrusted=("market", "market_title", "trader")),
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
              "Copying {trader} cannot continue: [{amount} needed, ]more than the trading "
              "wallet holds. Deposit pUSD to resume.", amount_field="amount",
              untrusted=("trader",)),
    EventType("order.filled", "Order filled",
              "{side} {size} shares of {market} at {price}[ for {amount}].",
              amount_field="amount", untrusted=("market", "market_title")),
    EventType("order.failed", "Order failed",
              "Your order on {market} failed: {reason}.", reason_field="reason",
              untrusted=("market", "market_title", "reason")),
    EventType("claim.available", "Winnings to claim",
              "[{amount} ]can be claimed from {market}.", amount_field="amount",
              untrusted=("market", "market_title")),
    EventType("claim.completed", "Claim completed",
              "[{amount} ]claimed from {market}.", amount_field="amount",
              untrusted=("market", "market_title")),
    EventType("withdrawal.completed", "Withdrawal completed",
              "[{amount} ]sent to {to_address}.", amount_field="amount"),
    EventType("withdrawal.ambiguous", "Withdrawal unclear",
              "A withdrawal[ of {amount}] to {to_address} may or may not have gone "
              "through; check the chain before trying again.", amount_field="amount"),
    EventType("deposit.received", "Deposit received",
              "[{amount} ]arrived in your trading wallet.", amount_field="amount"),
    EventType("account.ready", "Account ready",
              "Your trading account is ready: you can trade and copy."),
    EventType("feed.degraded", "Detection slowed",
              "Live trade detection fell back, so copies may be late. {reason}.",
              reason_field="reason"),
    EventType("venue.throttled", "Orders slowed",
              "Polymarket warned that your account sends orders fast: copytrade now sends at "
              "most {limit} {kind} per 10 seconds, and speeds up again while no warning "
              "comes.", reason_field="kind", untrusted=("venue_message",)),
    EventType("agent.confirmation", "An agent waits for your yes",
              "[{agent} asks to do this: {summary} ]Approve or decline it on the dashboard "
              "within 15 minutes; nothing is sent before.", untrusted=("summary",)),
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
        return numbers.UNKNOWN
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    return str(value)


def quote(text: Any) -> str:
    """Third-party text made safe to quote in one line: control characters folded, cut."""
    cleaned = _CONTROL.sub(" ", _shown(text)).strip()
    return cleaned if len(cleaned) <= MAX_QUOTED else cleaned[: MAX_QUOTED - 1] + "…"


def _market(payload: Mapping[str, Any]) -> str | None:
    """The market as a sentence names it: its question quoted, with the outcome; the slug or
    token the payload carries when the catalogue had no title."""
    name = payload.get("market_title") or payload.get("market")
    if not name:
        return None
    outcome = payload.get("outcome")
    return f"“{quote(name)}”" + (f" ({quote(outcome)})" if outcome else "")


_FORMATS = {"amount": lambda value, payload: numbers.money(
                value, str(payload.get("token") or numbers.TOKEN)),
            "price": lambda value, payload: numbers.price(value, payload.get("tick")),
            "size": lambda value, payload: numbers.shares(value)}


def words(payload: Mapping[str, Any], untrusted: tuple[str, ...] = ()) -> dict[str, str]:
    """The payload's fields as a sentence shows them, unknown ones left out: amounts as
    money with their token, prices to the tick, shares to 2 decimals, the market named."""
    shown: dict[str, str] = {}
    for key, value in payload.items():
        if value is None or value == "":
            continue
        if key in _FORMATS:
            if numbers.known(value):
                shown[key] = _FORMATS[key](value, payload)
        else:
            shown[key] = quote(value) if key in untrusted else _shown(value)
    market = _market(payload)
    if market is not None:
        shown["market"] = market
    address = payload.get("trader_address")
    if address and "trader" in shown and shown["trader"] != short_address(address):
        shown["trader"] = f"{shown['trader']} ({short_address(address)})"
    if "reason_text" not in shown and "reason" in shown:
        shown["reason_text"] = shown["reason"]
    return shown


_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")
_FIELD = re.compile(r"\{(\w+)\}")


def fill(template: str, shown: Mapping[str, str]) -> str:
    """``template`` with ``shown``'s fields: a [bracketed] part whose fields are not all
    known is left out, and a field unknown outside one reads "—", never "?"."""
    def optional(match: re.Match[str]) -> str:
        part = match.group(1)
        return part if all(name in shown for name in _FIELD.findall(part)) else ""

    text = _OPTIONAL.sub(optional, template)
    return _FIELD.sub(lambda m: shown.get(m.group(1), numbers.UNKNOWN), text)


def render(name: str, payload: Mapping[str, Any]) -> tuple[str, str]:
    """The (title, text) of an event of type ``name`` with ``payload``."""
    kind = EVENT_TYPES[name]
    return kind.title, fill(kind.template, words(payload, kind.untrusted))


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
