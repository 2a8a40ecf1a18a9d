"""Slack incoming webhooks: ``&``, ``<`` and ``>`` escaped (no ``<url|text>`` link, no
``<!channel>`` from a market title); the URL must start with SLACK_WEBHOOK_URL_PREFIX."""

from __future__ import annotations

import json

from config import NotificationConfig
from models.notifications import SLACK
from services.notifications.providers.sealed_urls import UrlProvider
from services.notifications.transports import Message


def slack_escape(text: str) -> str:
    """``text`` with Slack's control characters escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Slack(UrlProvider):
    """A message to a Slack app's incoming webhook."""

    kind = SLACK
    label = "Slack"
    url_hint = "the incoming-webhook URL"

    def url_prefix(self, config: NotificationConfig) -> str | None:
        """SLACK_WEBHOOK_URL_PREFIX."""
        return config.slack_url_prefix

    def body(self, message: Message) -> bytes:
        """The escaped title and text, and the link as Slack's ``<url|words>``."""
        text = f"*{slack_escape(message.title)}*\n{slack_escape(message.text)}"
        if message.link:
            text += f"\n<{message.link}|Open in copytrade>"
        return json.dumps({"text": text}).encode()


PROVIDER = Slack()
