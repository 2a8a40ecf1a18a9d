"""Telegram's webhook (used when BASE_URL is https): updates pushed by Telegram, checked by the
secret it echoes, answered by the bot (services/identity/telegram_bot.py)."""

from __future__ import annotations

from flask import Blueprint, Response, request

from services.identity import telegram_bot
from services.notifications import telegram
from services.platform import keyring

bp = Blueprint("telegram", __name__)


@bp.post(telegram.WEBHOOK_PATH)
def webhook() -> Response:
    """One update from Telegram; 403 without the shared secret."""
    given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
    if not telegram.configured() or not keyring.same(given, telegram.webhook_secret()):
        return Response(status=403)
    update = request.get_json(silent=True)
    if isinstance(update, dict):
        telegram_bot.handle_update(update)
    return Response(status=200)
