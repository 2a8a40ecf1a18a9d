"""Discord incoming webhooks: title and text with every markdown character escaped, mentions
off (a market title cannot format, link or ping); the URL must start with
DISCORD_WEBHOOK_URL_PREFIX."""

from __future__ import annotations

import json
import re

from config import NotificationConfig
from models.notifications import DISCORD
from services.notifications.providers.sealed_urls import UrlProvider
from services.notifications.transports import Message

# Discord's markdown: emphasis, code, spoilers, quotes, headings, lists, masked links
# ``[text](url)``, ``<...>`` forms; ``:`` so a bare ``https://`` in venue text is no link.
_DISCORD_MARKUP = re.compile(r"([\\*_~`|>#\-\[\]()<:])")


def discord_escape(text: str) -> str:
    """``text`` with every markdown character backslash-escaped: shown as typed, never as a
    link or formatting (a trader named ``[Claim refund](https://evil)`` stays text)."""
    return _DISCORD_MARKUP.sub(r"\\\1", text)


class Discord(UrlProvider):
    """A message to a Discord channel's incoming webhook."""

    kind = DISCORD
    label = "Discord"
    url_hint = "the incoming-webhook URL"

    def url_prefix(self, config: NotificationConfig) -> str | None:
        """DISCORD_WEBHOOK_URL_PREFIX."""
        return config.discord_url_prefix

    def body(self, message: Message) -> bytes:
        """``content`` escaped, the link last, no mentions."""
        return json.dumps({"content": f"**{discord_escape(message.title)}**\n"
                                      f"{discord_escape(message.text)}"
                           + (f"\n{message.link}" if message.link else ""),
                           "allowed_mentions": {"parse": []}}).encode()


PROVIDER = Discord()
