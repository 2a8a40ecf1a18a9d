"""The Telegram bot's commands, for the user a chat is linked to (services/notifications/
telegram.py links it with ``/start CODE``): /status, /pnl, /positions, /configs,
/stop <config>, /start <config>, /help. A chat linked to nobody gets a polite refusal and
nothing is done. A stop asks first, with an inline button; an agent's call waiting for a
person comes with Approve and Decline buttons (agent_confirmations.decide, as on the
dashboard: once, and only the linked person's own).

Links and commands are taken only in a private chat, from its one person (``from.id`` is
the chat's id): a group is refused, else every member could stop copying or read the PnL.

It lives in identity because a linked chat is a credential: the chat id resolves to the
user, and every command then calls the same services REST and MCP call.
"""

from __future__ import annotations

import logging
from typing import Any
from uuid import UUID

from models.user import User
from services.copying import configs, rule_labels
from services.copying.copy_notices import trader
from services.identity import agent_confirmations
from services.notifications import inbox, telegram
from services.notifications.providers.telegram import APPROVE, DECLINE
from services.platform import errors
from services.platform.numbers import money, plural, pnl, shares
from services.trading import positions, stats

log = logging.getLogger(__name__)

HELP = ("Commands:\n/status: copying and unread notifications\n/pnl: profit and loss\n"
        "/positions: open positions\n/configs: your copy configs (numbered)\n"
        "/stop N: stop copying config N (asks first)\n/start N: start copying config N\n"
        "/help: this list")
REFUSAL = ("Sorry, this chat is not linked to a copytrade account, so I can do nothing "
           "here. Add a Telegram channel in copytrade and send the /start code it shows.")
NOT_PRIVATE = ("Sorry, I take commands and link codes only in a private chat with me, from "
               "the person the account is linked to: in a group every member could use them.")


def _from_the_person(chat: dict[str, Any], sender: dict[str, Any]) -> bool:
    """Whether an update comes from the one person of a private chat: there the chat's id is
    the person's (``from.id``), so a chat linked this way is one person's."""
    return (chat.get("type") == "private" and sender.get("id") is not None
            and sender.get("id") == chat.get("id"))


def handle_update(update: dict[str, Any]) -> str | None:
    """Answer one Telegram update (a message or a button press); the reply sent, if any."""
    if "callback_query" in update:
        return _button(update["callback_query"])
    message = update.get("message") or {}
    chat = message.get("chat") or {}
    chat_id = chat.get("id")
    text = (message.get("text") or "").strip()
    if chat_id is None or not text.startswith("/"):
        return None
    if not _from_the_person(chat, message.get("from") or {}):
        # A group (linked or not): no link code is spent, no command runs, nothing is read.
        telegram.send_message(chat_id, NOT_PRIVATE)
        return NOT_PRIVATE
    command, _, argument = text.partition(" ")
    command = command.split("@", 1)[0].lower()
    argument = argument.strip()
    user_id = telegram.linked_user(chat_id)
    if user_id is None:
        if command == "/start" and argument and telegram.link(argument, chat_id):
            reply = "Linked. You will get your notifications here. " + HELP
        else:
            reply = REFUSAL
        telegram.send_message(chat_id, reply)
        return reply
    user = User.get_by_id(user_id)
    buttons = None
    try:
        reply, buttons = _command(user, command, argument)
    except errors.CopytradeError as exc:
        reply = f"That did not work: {exc.message}"
    telegram.send_message(chat_id, reply, buttons)
    return reply


def _command(user: User, command: str, argument: str) -> tuple[str, Any]:
    if command == "/status":
        listed = configs.list_configs(user)
        active = sum(1 for c in listed if c.is_active)
        return (f"Copying {active} of {plural(len(listed), 'config')}. "
                f"{plural(inbox.unread_count(user), 'unread notification')}."), None
    if command == "/pnl":
        summary = stats.user_summary(user)
        trades = plural(summary["trade_count"], "filled trade")
        return (f"Total PnL {pnl(summary['total_pnl'])} (realized "
                f"{pnl(summary['realized_pnl'])}), {trades}."), None
    if command == "/positions":
        held = positions.list_positions(user)
        if not held:
            return "No open positions.", None
        return "\n".join(f"{shares(p['size'])} shares of “{p['market_title'] or p['market_slug']}” "
                         f"({p['outcome']}): {money(p['current_value'])}" for p in held[:20]), None
    if command == "/configs":
        return _config_list(user), None
    if command in ("/stop", "/start"):
        config = _config(user, argument)
        if command == "/start":
            configs.start(user, config.id)
            return f"Copying {trader(config)} started.", None
        return (f"Stop copying {trader(config)}?",
                [[{"text": "Yes, stop", "callback_data": f"stop:{config.id}"},
                  {"text": "No", "callback_data": "cancel"}]])
    return HELP, None


def _config_list(user: User) -> str:
    listed = configs.list_configs(user)
    if not listed:
        return "No copy configs yet."
    return "\n".join(f"{n}. {trader(c)}: {'copying' if c.is_active else 'stopped'}, "
                     f"{rule_labels.sizing(c.sizing_mode, c.size_multiplier, c.fixed_usdc)}"
                     for n, c in enumerate(listed, 1))


def _config(user: User, argument: str) -> Any:
    listed = configs.list_configs(user)
    if argument.isdigit() and 1 <= int(argument) <= len(listed):
        return listed[int(argument) - 1]
    for config in listed:
        if argument and str(config.id).startswith(argument.lower()):
            return config
    raise errors.NotFound("No such config: send /configs for their numbers.")


def _button(query: dict[str, Any]) -> str | None:
    chat = (query.get("message") or {}).get("chat") or {}
    chat_id = chat.get("id")
    data = query.get("data") or ""
    if not _from_the_person(chat, query.get("from") or {}):
        telegram.answer_button(query.get("id", ""), "Only in a private chat with me.")
        return None
    user_id = telegram.linked_user(chat_id)
    if user_id is None:
        telegram.answer_button(query.get("id", ""), "Not linked.")
        return None
    if data.startswith("stop:"):
        try:
            config = configs.stop(User.get_by_id(user_id), UUID(data[5:]))
            reply = f"Copying {trader(config)} stopped."
        except (errors.CopytradeError, ValueError):
            reply = "That config is gone."
    elif data.startswith((APPROVE, DECLINE)):
        reply = _decide(user_id, data)
    else:
        reply = "Nothing changed."
    telegram.answer_button(query.get("id", ""), reply)
    telegram.send_message(chat_id, reply)
    return reply


def _decide(user_id: Any, data: str) -> str:
    """Approve or decline an agent's waiting call: the dashboard's service, single use."""
    approve = data.startswith(APPROVE)
    try:
        confirmation_id = UUID(data.partition(":")[2])
        agent_confirmations.decide(User.get_by_id(user_id), confirmation_id, approve=approve,
                                   by="telegram")
    except (ValueError, errors.NotFound):  # another account's, or no id: say nothing of it
        return "That confirmation is gone."
    except errors.CopytradeError:
        return "That call was already answered, used or has expired: nothing changed."
    if approve:
        return "Approved: the agent's call runs when it calls again (once)."
    return "Declined: nothing will be sent."


def poll_once(offset: int | None, timeout: float) -> int | None:
    """Fetch and answer one batch of updates; the next offset."""
    for update in telegram.get_updates(offset, timeout):
        offset = int(update["update_id"]) + 1
        try:
            handle_update(update)
        except Exception:  # one bad update must not stop the bot
            log.exception("telegram update %s failed", update.get("update_id"))
    return offset
