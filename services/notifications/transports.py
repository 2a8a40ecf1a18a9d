"""Sending one message to one channel: a signed webhook, an email, a Telegram message, a
Discord or Slack incoming webhook. Each returns an Outcome; none raises for the receiver's
faults (retrying is the caller's business, services/notifications/deliveries.py).

User-given URLs (webhooks, Discord, Slack) go through the guarded outbound client
(services/platform/outbound.py): no private addresses, a wall-clock deadline, a size cap.
The Telegram Bot API's base URL is the operator's (TELEGRAM_API_URL), so plain httpx.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from config import NotificationConfig
from models.notifications import DISCORD, EMAIL, SLACK, TELEGRAM, WEBHOOK, NotificationChannel
from services.notifications import secrets as channel_secrets
from services.notifications import telegram, urls
from services.notifications.outcome import USER_AGENT, Outcome
from services.platform import errors, mailer, outbound
from services.platform.runtime import runtime

log = logging.getLogger(__name__)

MAX_ANSWER_BYTES = 64 * 1024


@dataclass(frozen=True)
class Message:
    """What one delivery says: the same title and text on every channel."""

    id: str  # webhook-id: the same across retries
    type: str
    title: str
    text: str
    created_at: datetime
    link: str | None = None
    data: dict[str, Any] = field(default_factory=dict)  # the envelope payload (machines)
    unsubscribe_url: str | None = None


def _settings() -> NotificationConfig:
    return runtime().settings.notifications


def webhook_body(message: Message) -> bytes:
    """The JSON a webhook receives (Standard Webhooks: type, timestamp, data)."""
    return json.dumps({
        "type": message.type, "timestamp": message.created_at.isoformat(),
        "data": {"id": message.id, "title": message.title, "text": message.text,
                 "link": message.link, **message.data}}, separators=(",", ":"),
        default=str).encode()


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The ``v1,<base64>`` signature of Standard Webhooks for one secret (``whsec_...``)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def webhook_headers(channel: NotificationChannel, message: Message, body: bytes,
                    now: float | None = None) -> dict[str, str]:
    """webhook-id, webhook-timestamp and webhook-signature (both secrets while rotating)."""
    timestamp = int(now if now is not None else time.time())
    signatures = [sign(secret, message.id, timestamp, body)
                  for secret in channel_secrets.signing_secrets(channel)]
    return {"webhook-id": message.id, "webhook-timestamp": str(timestamp),
            "webhook-signature": " ".join(signatures), "content-type": "application/json",
            "user-agent": USER_AGENT}


def _post(url: str, body: bytes, headers: dict[str, str]) -> Outcome:
    config = _settings()
    started = time.monotonic()
    try:
        answer = outbound.fetch(url, method="POST", content=body, headers=headers,
                                deadline_seconds=config.send_deadline_seconds,
                                max_bytes=MAX_ANSWER_BYTES, allow=urls.address_rule(url, config))
    except outbound.Refused as exc:
        return Outcome(False, error=str(exc)[:300], permanent=True, latency_ms=_since(started))
    except outbound.FetchError as exc:
        return Outcome(False, error=str(exc)[:300], latency_ms=_since(started))
    latency = _since(started)
    if 200 <= answer.status < 300:
        return Outcome(True, answer.status, latency_ms=latency)
    return Outcome(False, answer.status, error=f"the receiver answered {answer.status}",
                   gone=answer.status == 410, latency_ms=latency)


def _since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# Discord's markdown: emphasis, code, spoilers, quotes, headings, lists, masked links
# ``[text](url)``, ``<...>`` forms; ``:`` so a bare ``https://`` in venue text is no link.
_DISCORD_MARKUP = re.compile(r"([\\*_~`|>#\-\[\]()<:])")


def discord_escape(text: str) -> str:
    """``text`` with every markdown character backslash-escaped: shown as typed, never as a
    link or formatting (a trader named ``[Claim refund](https://evil)`` stays text)."""
    return _DISCORD_MARKUP.sub(r"\\\1", text)


def send_webhook(channel: NotificationChannel, message: Message) -> Outcome:
    """POST the signed event to the user's endpoint."""
    body = webhook_body(message)
    return _post(channel_secrets.url_of(channel), body, webhook_headers(channel, message, body))


def send_discord(channel: NotificationChannel, message: Message) -> Outcome:
    """POST to a Discord incoming webhook; mentions off (a market title cannot ping)."""
    body = json.dumps({"content": f"**{discord_escape(message.title)}**\n"
                                  f"{discord_escape(message.text)}"
                       + (f"\n{message.link}" if message.link else ""),
                       "allowed_mentions": {"parse": []}}).encode()
    return _post(channel_secrets.url_of(channel), body, {"content-type": "application/json",
                                        "user-agent": USER_AGENT})


def send_slack(channel: NotificationChannel, message: Message) -> Outcome:
    """POST to a Slack incoming webhook (text escaped: no <!channel> from a market title)."""
    text = f"*{_slack_escape(message.title)}*\n{_slack_escape(message.text)}"
    if message.link:
        text += f"\n<{message.link}|Open in copytrade>"
    body = json.dumps({"text": text}).encode()
    return _post(channel_secrets.url_of(channel), body, {"content-type": "application/json",
                                        "user-agent": USER_AGENT})


def email_text(message: Message) -> str:
    """The plain-text body of a notification email."""
    lines = [message.text]
    if message.link:
        lines += ["", message.link]
    if message.unsubscribe_url:
        lines += ["", f"Stop these emails: {message.unsubscribe_url}"]
    return "\n".join(lines) + "\n"


def send_email(channel: NotificationChannel, message: Message) -> Outcome:
    """Mail the message through SMTP_URL with a one-click unsubscribe (RFC 8058)."""
    settings = runtime().settings
    if not settings.smtp_url:
        return Outcome(False, error="SMTP_URL is not set: no email can be sent", permanent=True)
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
        return Outcome(False, error=exc.message, latency_ms=_since(started))
    return Outcome(True, latency_ms=_since(started))


def send_telegram(channel: NotificationChannel, message: Message) -> Outcome:
    """sendMessage to the linked chat, as plain text (no markup a market title could use)."""
    text = f"{message.title}\n{message.text}" + (f"\n{message.link}" if message.link else "")
    return telegram.send_message(channel.target, text)


SENDERS = {WEBHOOK: send_webhook, EMAIL: send_email, TELEGRAM: send_telegram,
           DISCORD: send_discord, SLACK: send_slack}


def send(channel: NotificationChannel, message: Message) -> Outcome:
    """Send ``message`` on ``channel`` by its kind."""
    return SENDERS[channel.kind](channel, message)


