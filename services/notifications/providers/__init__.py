"""Notification channel kinds as registered providers: one module per kind (webhook, email,
telegram, discord, slack), each holding how a channel of its kind is checked and added, shown
without a secret, sent to (over services/notifications/transports.py) and labelled. The table
here is the one list of kinds: the API's and MCP's choices (``schemas.notifications
.CHANNEL_KINDS``), the dashboard's form and the docs' table (docs/reference/channels.md)
come from it. The in-app centre is no kind: every event is its own row there.

A new kind: its module here, one line in ``_KINDS`` below, its tests
(docs/development/layout.md, "Add a channel")."""

from __future__ import annotations

from models.notifications import NotificationChannel
from schemas.notifications import CHANNEL_KINDS
from services.notifications.outcome import Outcome
from services.notifications.providers import discord, email, slack, telegram, webhook
from services.notifications.providers.base import Added, Provider
from services.notifications.transports import Message
from services.platform import errors

__all__ = ["Added", "Provider", "all_providers", "get", "register", "send", "unregister"]

_TABLE: dict[str, Provider] = {}


def register(provider: Provider) -> Provider:
    """Put ``provider`` in the table: its kind is a choice on every surface from now on."""
    if provider.kind in _TABLE:
        raise ValueError(f"channel kind {provider.kind!r} is registered already")
    _TABLE[provider.kind] = provider
    CHANNEL_KINDS.add(provider.kind)
    return provider


def unregister(kind: str) -> None:
    """Take ``kind`` out of the table (a test's own kind, when it ends)."""
    _TABLE.pop(kind, None)
    CHANNEL_KINDS.discard(kind)


def all_providers() -> tuple[Provider, ...]:
    """Every registered provider, in the order they registered."""
    return tuple(_TABLE.values())


def get(kind: str) -> Provider:
    """The provider of ``kind``; ValidationFailed on ``kind`` for one not registered."""
    try:
        return _TABLE[kind]
    except KeyError:
        raise errors.ValidationFailed(fields={"kind": ["Unknown channel kind."]}) from None


def send(channel: NotificationChannel, message: Message) -> Outcome:
    """Send ``message`` on ``channel`` through its kind's provider."""
    return get(channel.kind).send(channel, message)


_KINDS = (webhook, email, telegram, discord, slack)  # the order the API and forms list them
for _module in _KINDS:
    register(_module.PROVIDER)
