"""Webhooks: the event as JSON, signed per Standard Webhooks (``webhook-id``,
``webhook-timestamp``, ``webhook-signature``: ``v1,`` + base64 HMAC-SHA256 of
``id.timestamp.body``) with a secret shown once and rotatable."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

from models.notifications import WEBHOOK, NotificationChannel
from services.notifications import secrets as channel_secrets
from services.notifications.outcome import USER_AGENT
from services.notifications.providers.sealed_urls import UrlProvider
from services.notifications.transports import Message


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


class Webhook(UrlProvider):
    """A signed POST of the event to the user's endpoint."""

    kind = WEBHOOK
    label = "Webhook"
    url_hint = "your https endpoint"
    signs = True

    def body(self, message: Message) -> bytes:
        """The Standard Webhooks JSON."""
        return webhook_body(message)

    def headers(self, channel: NotificationChannel, message: Message,
                body: bytes) -> dict[str, str]:
        """The Standard Webhooks headers, signed with the channel's secrets."""
        return webhook_headers(channel, message, body)


PROVIDER = Webhook()
