"""What a channel kind is: a ``Provider`` that adds a channel of its kind (checking what the
user gave), shows it without a secret, sends one message over the shared transports, and
names itself. Each kind is one module of this package; ``providers/__init__.py`` is their
table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from models.notifications import NotificationChannel
from models.user import User
from services.notifications.outcome import Outcome
from services.notifications.transports import Message


@dataclass(frozen=True)
class Added:
    """A new channel, with what is shown only now: a webhook's secret, a Telegram link code."""

    channel: NotificationChannel
    secret: str | None = None
    link_code: str | None = None
    link_url: str | None = None
    url: str | None = None  # the whole URL the owner gave (shown only in this answer)


class Provider:
    """One channel kind: its name and labels, and how it adds, shows and sends a channel."""

    kind: ClassVar[str]  # stored in notification_channels.kind; the API's ``kind``
    label: ClassVar[str]  # what people read: "Webhook"
    takes_url: ClassVar[bool] = False  # the channel is added with a ``url``
    url_hint: ClassVar[str]  # the dashboard form's word on the URL field for this kind
    target: ClassVar[str]  # what ``target`` shows, for the docs table
    signs: ClassVar[bool] = False  # it has a signing secret (shown once, rotatable)

    def add(self, user: User, url: str | None, label: str) -> Added:
        """Store a new channel of this kind for ``user``; ValidationFailed naming a field."""
        raise NotImplementedError

    def shown_target(self, channel: NotificationChannel, whole_url: str | None = None) -> str:
        """``target`` as the API shows it: never a secret."""
        return channel.target

    def send(self, channel: NotificationChannel, message: Message) -> Outcome:
        """Send ``message`` on ``channel``; an Outcome, never raising for the receiver's faults."""
        raise NotImplementedError

    def unsubscribe_url(self, channel: NotificationChannel) -> str | None:
        """The one-click unsubscribe link a message on ``channel`` carries, if the kind has one."""
        return None
