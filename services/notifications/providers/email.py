"""Email: to the account's own address through SMTP_URL, plain text, with a one-click
unsubscribe (RFC 8058) in the headers and the footer."""

from __future__ import annotations

import time

from models.notifications import EMAIL, NotificationChannel
from models.user import User
from services.notifications import email_links
from services.notifications.outcome import Outcome
from services.notifications.providers.base import Added, Provider
from services.notifications.transports import Message, since
from services.platform import errors, mailer
from services.platform.runtime import runtime


def email_text(message: Message) -> str:
    """The plain-text body of a notification email."""
    lines = [message.text]
    if message.link:
        lines += ["", message.link]
    if message.unsubscribe_url:
        lines += ["", f"Stop these emails: {message.unsubscribe_url}"]
    return "\n".join(lines) + "\n"


class Email(Provider):
    """Mail to the account's address."""

    kind = EMAIL
    label = "Email"
    url_hint = "not needed (your account's address)"
    target = "the account's email address"

    def add(self, user: User, url: str | None, label: str) -> Added:
        """The account's address; no URL taken."""
        return Added(NotificationChannel.create(user=user, kind=self.kind,
                                                label=label or user.email, target=user.email))

    def unsubscribe_url(self, channel: NotificationChannel) -> str | None:
        """The channel's one-click unsubscribe link."""
        return email_links.unsubscribe_url(channel.id)

    def send(self, channel: NotificationChannel, message: Message) -> Outcome:
        """Mail the message through SMTP_URL with a one-click unsubscribe (RFC 8058)."""
        settings = runtime().settings
        if not settings.smtp_url:
            return Outcome(False, error="SMTP_URL is not set: no email can be sent",
                           permanent=True)
        email = mailer.build_message(settings.mail_from, channel.target,
                                     f"copytrade: {message.title}", email_text(message))
        if message.unsubscribe_url:
            email["List-Unsubscribe"] = f"<{message.unsubscribe_url}>"
            email["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
        started = time.monotonic()
        try:
            mailer.send(settings.smtp_url, email,
                        timeout=settings.notifications.send_deadline_seconds)
        except errors.Unavailable as exc:
            return Outcome(False, error=exc.message, latency_ms=since(started))
        return Outcome(True, latency_ms=since(started))


PROVIDER = Email()
