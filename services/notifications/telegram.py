"""The Telegram Bot API, spoken over httpx against TELEGRAM_API_URL (a local fake in tests):
send a message (optionally with inline buttons), long-poll updates, set the webhook, answer a
button; and linking a chat to a user by the one-time code of ``/start CODE``.

python-telegram-bot is asyncio-only and owns its event loop; our worker is Trio, and we need
five methods, so a small client here is less to carry than an adapter.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

import httpx

from models.base import utcnow
from models.notifications import TELEGRAM, NotificationChannel
from services.notifications.outcome import USER_AGENT, Outcome
from services.platform import keyring
from services.platform.runtime import runtime
from venue.tls import client_context

WEBHOOK_PATH = "/notifications/telegram/webhook"


def configured() -> bool:
    """Whether a bot token is set."""
    return bool(runtime().settings.notifications.telegram_bot_token)


def _url(method: str) -> str:
    config = runtime().settings.notifications
    return f"{config.telegram_api_url}/bot{config.telegram_bot_token}/{method}"


def call(method: str, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
    """One Bot API call; the decoded answer (``ok``, ``result`` or ``description``)."""
    config = runtime().settings.notifications
    with httpx.Client(timeout=timeout or config.send_deadline_seconds,
                      trust_env=False, verify=client_context()) as client:
        response = client.post(_url(method), json=payload, headers={"user-agent": USER_AGENT})
    try:
        answer = response.json()
    except ValueError:
        answer = {"ok": False, "description": f"HTTP {response.status_code}"}
    answer.setdefault("error_code", response.status_code if not answer.get("ok") else None)
    return answer


def send_message(chat_id: str | int, text: str,
                 buttons: list[list[dict[str, str]]] | None = None) -> Outcome:
    """Send plain text (no parse mode: a market title cannot format it); an Outcome. A chat
    that blocked the bot (403) is gone."""
    payload: dict[str, Any] = {"chat_id": chat_id, "text": text[:4000],
                               "disable_web_page_preview": True}
    if buttons:
        payload["reply_markup"] = {"inline_keyboard": buttons}
    started = time.monotonic()
    try:
        answer = call("sendMessage", payload)
    except httpx.HTTPError as exc:
        return Outcome(False, error=f"Telegram unreachable: {type(exc).__name__}",
                                  latency_ms=int((time.monotonic() - started) * 1000))
    latency = int((time.monotonic() - started) * 1000)
    if answer.get("ok"):
        return Outcome(True, 200, latency_ms=latency)
    code = answer.get("error_code")
    return Outcome(False, code, error=str(answer.get("description"))[:300],
                              gone=code == 403, latency_ms=latency)


def get_updates(offset: int | None, timeout: float) -> list[dict[str, Any]]:
    """Long-poll new updates after ``offset``."""
    answer = call("getUpdates", {"offset": offset, "timeout": int(timeout),
                                 "allowed_updates": ["message", "callback_query"]},
                  timeout=timeout + 10)
    return answer.get("result") or [] if answer.get("ok") else []


def answer_button(callback_id: str, text: str) -> None:
    """Acknowledge an inline button press (the client stops its spinner)."""
    call("answerCallbackQuery", {"callback_query_id": callback_id, "text": text[:190]})


def webhook_secret() -> str:
    """The secret Telegram echoes in X-Telegram-Bot-Api-Secret-Token on each webhook call."""
    settings = runtime().settings
    return keyring.keyed_hash(settings.secret_key, "telegram-webhook",
                              settings.notifications.telegram_bot_token or "")[:64]


def set_webhook() -> bool:
    """Have Telegram push updates to BASE_URL's webhook (when BASE_URL is https)."""
    settings = runtime().settings
    answer = call("setWebhook", {"url": settings.base_url + WEBHOOK_PATH,
                                 "secret_token": webhook_secret(),
                                 "allowed_updates": ["message", "callback_query"]})
    return bool(answer.get("ok"))


def uses_webhook() -> bool:
    """Webhook when BASE_URL is https (Telegram only calls https); long polling otherwise."""
    return runtime().settings.base_url.startswith("https://")


def linked_user(chat_id: str | int) -> Any:
    """The user id a chat is linked to, or None."""
    channel = NotificationChannel.get_or_none(NotificationChannel.kind == TELEGRAM,
                                              NotificationChannel.target == str(chat_id),
                                              NotificationChannel.enabled == True)  # noqa: E712
    return channel.user_id if channel else None


def link_code_hash(code: str) -> str:
    """How a link code is stored (the code itself never is)."""
    return hashlib.sha256(b"copytrade/telegram-link/" + code.strip().encode()).hexdigest()


def link(code: str, chat_id: str | int) -> bool:
    """Link ``chat_id`` to the channel whose one-time code this is; whether it was valid."""
    digest = link_code_hash(code)
    changed = NotificationChannel.update(
        target=str(chat_id), enabled=True, disabled_reason=None, link_code_hash=None,
        link_code_expires_at=None,
    ).where(NotificationChannel.kind == TELEGRAM, NotificationChannel.link_code_hash == digest,
            NotificationChannel.link_code_expires_at > utcnow()).execute()
    return changed == 1
