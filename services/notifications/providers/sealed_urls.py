"""The kinds that post to a URL the user gave (webhook, Discord, Slack): the URL checked when
added (https, public addresses; services/notifications/urls.py), stored sealed in
``url_sealed`` with ``target`` showing only its scheme and host, and posted to through the
guarded outbound client. A kind of this sort says what it posts and with which headers."""

from __future__ import annotations

from typing import ClassVar
from uuid import uuid4

from config import NotificationConfig
from models.notifications import NotificationChannel
from models.user import User
from services.notifications import secrets as channel_secrets
from services.notifications import transports, urls
from services.notifications.outcome import Outcome
from services.notifications.providers.base import Added, Provider
from services.notifications.transports import Message
from services.platform.runtime import runtime


class UrlProvider(Provider):
    """A kind that posts to a user-given URL, sealed at rest and shown as scheme and host."""

    takes_url: ClassVar[bool] = True
    target: ClassVar[str] = ("the URL's scheme and host, `https://host/…` (the whole URL is "
                             "sealed; shown only in the answer that adds the channel)")

    def url_prefix(self, config: NotificationConfig) -> str | None:
        """The start every URL of this kind must have (the service's own host), or None."""
        return None

    def add(self, user: User, url: str | None, label: str) -> Added:
        """Check the URL, then store it sealed (and a new signing secret when the kind signs)."""
        config = runtime().settings.notifications
        checked = urls.check(url or "", "url", config, prefix=self.url_prefix(config))
        channel_id = uuid4()
        secret = channel_secrets.new_secret() if self.signs else None
        channel = NotificationChannel.create(
            id=channel_id, user=user, kind=self.kind, label=label,
            target=channel_secrets.shown_url(checked),
            url_sealed=channel_secrets.seal(channel_id, checked, "url_sealed"),
            secret_sealed=channel_secrets.seal(channel_id, secret) if secret else None)
        return Added(channel, secret=secret, url=checked)

    def shown_target(self, channel: NotificationChannel, whole_url: str | None = None) -> str:
        """Scheme and host only (a row not moved by m0110 yet too), unless ``whole_url``."""
        if not channel.target:
            return channel.target
        return whole_url or channel_secrets.shown_url(channel.target)

    def body(self, message: Message) -> bytes:
        """What this kind posts for ``message``."""
        raise NotImplementedError

    def headers(self, channel: NotificationChannel, message: Message,
                body: bytes) -> dict[str, str]:
        """The headers of the POST (JSON and our user agent unless the kind adds more)."""
        return dict(transports.JSON_HEADERS)

    def send(self, channel: NotificationChannel, message: Message) -> Outcome:
        """POST the kind's body to the channel's unsealed URL."""
        body = self.body(message)
        return transports.post(channel_secrets.url_of(channel), body,
                               self.headers(channel, message, body))
