"""One-tap approval in Telegram (issue 47): an agent's code-path confirmation reaches the
person's linked chat with the call's words and Approve / Decline buttons; a tap there is the
dashboard's decision (single use, the linked person's own), against a fake Bot API over HTTP
and the official MCP client."""

from __future__ import annotations

from typing import Any

from mcp import Client

from models.agents import AgentConfirmation
from models.notifications import Notification, NotificationDelivery
from services.notifications import channels, deliveries
from services.notifications.providers.telegram import APPROVE, DECLINE
from tests.mcp_server.conftest import run_client
from tests.mcp_server.test_confirmations import (
    confirmation_line,
    key,
    order_of,
    placing,
    refused,
)
from tests.mcp_server.test_write_tools import orders_for
from tests.notifications.conftest import tune  # noqa: F401 - fixture
from tests.notifications.fakes import FakeTelegram, running
from tests.worker.conftest import prefix, redis_conn  # noqa: F401 - fixtures
from worker import jobs_notifications

CHAT, OTHER_CHAT, STRANGER = 6161, 7272, 999


def link(telegram: FakeTelegram, owner: Any, chat: int) -> None:
    """Link ``chat`` to ``owner`` the way a person does: /start with the channel's code."""
    added = channels.add(owner, "telegram")
    telegram.say(chat, f"/start {added.link_code}")
    poll()
    assert telegram.sent()[-1]["text"].startswith("Linked.")


def poll() -> None:
    """What the worker's Telegram poller does, once."""
    assert jobs_notifications.poll_telegram("test-worker")


def deliver_the_ask(confirmation_id: str) -> None:
    """Send the agent.confirmation event's Telegram delivery, as the worker's job does."""
    [delivery] = (
        NotificationDelivery.select()
        .join(Notification)
        .where(Notification.key == f"agent.confirmation:{confirmation_id}")
    )
    assert deliveries.deliver(delivery.id) == "sent"


def test_an_approve_tap_lets_the_agents_retry_run_once_and_a_decline_refuses(
    tune,  # noqa: F811 - the fixture imported above
    mcp_url,
    trader_key,
    trader,
    user,
    market,
    venue_control,
):
    with running(FakeTelegram()) as telegram:
        tune(
            telegram_bot_token=telegram.token,
            telegram_api_url=telegram.url,
            telegram_poll_seconds=0,
        )
        link(telegram, trader.user, CHAT)
        link(telegram, user, OTHER_CHAT)  # another account's linked chat
        token = trader_key("trade:execute", confirm=True)
        taps: dict[str, str] = {}

        def tap(chat: int, data: str, name: str) -> None:
            telegram.press(chat, data)
            poll()
            taps[name] = telegram.sent("answerCallbackQuery")[-1]["text"]

        async def body(client: Client):
            args = await placing(client, order_of(market))
            asked = await client.call_tool("place_market_order", args)
            shown = asked.structured_content["confirmation"]
            deliver_the_ask(shown["id"])
            message = telegram.sent()[-1]
            tap(STRANGER, f"{APPROVE}{shown['id']}", "stranger")
            tap(OTHER_CHAT, f"{APPROVE}{shown['id']}", "foreign")
            waiting = AgentConfirmation.get_by_id(shown["id"]).status
            tap(CHAT, f"{APPROVE}{shown['id']}", "approve")
            tap(CHAT, f"{DECLINE}{shown['id']}", "late decline")
            done = await client.call_tool(
                "place_market_order", {**args, "confirmation_code": shown["code"]}
            )
            again = await client.call_tool(
                "place_market_order",
                {**args, "confirmation_code": shown["code"], "idempotency_key": key()},
            )
            # A second order, declined in Telegram.
            other = await placing(client, order_of(market, "12"))
            second = (await client.call_tool("place_market_order", other)).structured_content[
                "confirmation"
            ]
            deliver_the_ask(second["id"])
            tap(CHAT, f"{DECLINE}{second['id']}", "decline")
            declined = await client.call_tool(
                "place_market_order", {**other, "confirmation_code": second["code"]}
            )
            return args, shown, message, waiting, done, again, declined

        args, shown, message, waiting, done, again, declined = run_client(
            mcp_url, token, "legacy", body
        )

    # The person reads the preview's own words, with one tap to answer; never the code.
    assert message["chat_id"] == str(CHAT)
    assert confirmation_line(args["preview_id"]) in message["text"]
    assert shown["code"] not in message["text"]
    [[approve, decline]] = message["reply_markup"]["inline_keyboard"]
    assert (approve["text"], approve["callback_data"]) == ("Approve", f"{APPROVE}{shown['id']}")
    assert (decline["text"], decline["callback_data"]) == ("Decline", f"{DECLINE}{shown['id']}")
    # Foreign chats change nothing.
    assert taps["stranger"] == "Not linked."
    assert taps["foreign"] == "That confirmation is gone."
    assert waiting == "pending"
    assert taps["approve"].startswith("Approved")
    assert taps["late decline"].startswith("That call was already answered")
    assert not done.is_error, done.structured_content
    assert done.structured_content["status"] == "filled"
    refused(again, "already used")
    assert taps["decline"].startswith("Declined")
    refused(declined, "declined")
    assert len(orders_for(venue_control, trader.maker)) == 1
    row = AgentConfirmation.get_by_id(shown["id"])
    assert (row.status, row.decided_by) == ("used", "telegram")
