"""Telegram: added off, with a one-time link code (15 minutes) the user sends to the bot as
``/start CODE`` (services/notifications/telegram.py links the chat); messages are plain text,
no parse mode. An agent's call waiting for a person (``agent.confirmation``) comes with
Approve and Decline buttons (services/identity/telegram_bot.py answers them)."""

from __future__ import annotations

import secrets
from datetime import timedelta

from models.base import utcnow
from models.notifications import TELEGRAM, NotificationChannel
from models.user import User
from services.notifications import telegram
from services.notifications.outcome import Outcome
from services.notifications.providers.base import Added, Provider
from services.notifications.transports import Message
from services.platform import errors
from services.platform.runtime import runtime

LINK_CODE_TTL = timedelta(minutes=15)
CONFIRMATION = "agent.confirmation"
# Button data (at most 64 bytes): the prefix and the confirmation's id.
APPROVE, DECLINE = "approve:", "decline:"


class Telegram(Provider):
    """A chat with the operator's bot, linked by a one-time code."""

    kind = TELEGRAM
    label = "Telegram"
    url_hint = "not needed (you get a link code)"
    target = "the linked chat's id; empty until `/start CODE` links it"

    def add(self, user: User, url: str | None, label: str) -> Added:
        """An unlinked channel and its link code; FeatureNotEnabled without a bot token."""
        config = runtime().settings.notifications
        if not config.telegram_bot_token:
            raise errors.FeatureNotEnabled("Telegram is not set up on this server "
                                           "(TELEGRAM_BOT_TOKEN).")
        code = secrets.token_urlsafe(12)
        channel = NotificationChannel.create(
            user=user, kind=self.kind, label=label or "Telegram", enabled=False,
            disabled_reason="waiting for /start in Telegram",
            link_code_hash=telegram.link_code_hash(code),
            link_code_expires_at=utcnow() + LINK_CODE_TTL)
        bot = config.telegram_bot_username
        return Added(channel, link_code=code,
                     link_url=f"https://t.me/{bot}?start={code}" if bot else None)

    def send(self, channel: NotificationChannel, message: Message) -> Outcome:
        """sendMessage to the linked chat, as plain text (no markup a market title could use)."""
        if message.type == CONFIRMATION:
            return self._ask(channel, message)
        text = (f"{message.title}\n{message.text}"
                + (f"\n{message.link}" if message.link else ""))
        return telegram.send_message(channel.target, text)

    def _ask(self, channel: NotificationChannel, message: Message) -> Outcome:
        """The event's words (the call's quoted, cut when long: then in full below it) and
        one tap to answer."""
        payload = message.data.get("payload") or {}
        summary = (payload.get("summary") or {}).get("untrusted_data", {}).get("text", "")
        text = f"{message.title}\n{message.text}"
        if summary and summary not in text:
            text += f"\nIn full: {summary}"
        confirmation = payload.get("confirmation_id")
        buttons = [[{"text": "Approve", "callback_data": f"{APPROVE}{confirmation}"},
                    {"text": "Decline", "callback_data": f"{DECLINE}{confirmation}"}]]
        return telegram.send_message(channel.target, text, buttons)


PROVIDER = Telegram()
