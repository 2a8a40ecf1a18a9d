"""Telegram, two-way, against a fake Bot API over HTTP: linking by /start CODE, events pushed,
commands answered for the linked user only, a stop confirmed by an inline button."""

from __future__ import annotations

from decimal import Decimal

import trio
from eth_account import Account

from models import User
from models.base import db, utcnow
from models.copying import CopyConfig
from models.migrations import m0110_channel_urls_sealed as m0110
from models.notifications import NotificationChannel, NotificationDelivery
from services.copying import copy_notices
from services.identity import telegram_bot
from services.notifications import channels, deliveries, events
from services.notifications import telegram as bot_api
from services.platform import numbers
from services.trading import positions, stats
from tests.notifications.fakes import FakeTelegram, running
from tests.services.trading.test_order_lifecycle import _place
from worker import jobs_notifications

CHAT, STRANGER = 4242, 999


def _config(user: User) -> CopyConfig:
    return CopyConfig.create(user=user.id, target_address=Account.create().address.lower(),
                             target_name="whale", size_multiplier=Decimal(1),
                             max_position_usdc=Decimal(100), price_deviation_bps=500,
                             paper_trading=True, is_active=True, started_at=utcnow(),
                             blocked_categories="[]")


def _poll(telegram: FakeTelegram) -> None:
    """What the worker's poller does, once."""
    assert jobs_notifications.poll_telegram("test-worker")


def test_link_push_commands_and_a_confirmed_stop(tune, user):
    with running(FakeTelegram()) as telegram:
        tune(telegram_bot_token=telegram.token, telegram_api_url=telegram.url,
             telegram_poll_seconds=0, telegram_bot_username="copytrade_bot")
        config = _config(user)
        whale = f"whale ({config.target_address[:6]}…{config.target_address[-4:]})"
        added = channels.add(user, "telegram")
        assert added.link_url == f"https://t.me/copytrade_bot?start={added.link_code}"
        assert not added.channel.enabled
        # A stranger's commands are refused and do nothing.
        telegram.say(STRANGER, "/stop 1")
        telegram.say(STRANGER, "/start not-a-code")
        _poll(telegram)
        refusals = telegram.sent()
        assert len(refusals) == 2
        assert all(r["chat_id"] == STRANGER and r["text"].startswith("Sorry, this chat is not "
                                                                     "linked") for r in refusals)
        assert CopyConfig.get_by_id(config.id).is_active
        # The user links their chat with the one-time code.
        telegram.say(CHAT, f"/start {added.link_code}")
        _poll(telegram)
        assert telegram.sent()[-1]["text"].startswith("Linked.")
        # The code works once.
        telegram.say(STRANGER, f"/start {added.link_code}")
        _poll(telegram)
        assert telegram.sent()[-1]["text"].startswith("Sorry")
        # Events are pushed to the chat, plain text.
        events.emit(user, "config.out_of_funds", "oof:1", trader="whale", amount=Decimal(5),
                    balance=Decimal(1))
        [delivery] = NotificationDelivery.select()
        assert deliveries.deliver(delivery.id) == "sent"
        pushed = telegram.sent()[-1]
        assert pushed["chat_id"] == str(CHAT) and "parse_mode" not in pushed
        assert pushed["text"].startswith("Out of funds\nCopying whale cannot continue: 5.00 pUSD")
        # Commands.
        for command in ("/help", "/status", "/configs"):
            telegram.say(CHAT, command)
        _poll(telegram)
        help_text, status, listing = (m["text"] for m in telegram.sent()[-3:])
        assert "/positions" in help_text and "/stop N" in help_text
        assert status == "Copying 1 of 1 config. 1 unread notification."
        assert listing == f"1. {whale}: copying, \u00d71 of the trader's size"
        telegram.say(CHAT, "/stop 1")
        _poll(telegram)
        ask = telegram.sent()[-1]
        assert ask["text"] == f"Stop copying {whale}?"
        assert ask["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == \
            f"stop:{config.id}"
        assert CopyConfig.get_by_id(config.id).is_active  # not before the button
        telegram.press(CHAT, f"stop:{config.id}")
        _poll(telegram)
        assert not CopyConfig.get_by_id(config.id).is_active
        assert telegram.sent("answerCallbackQuery")[-1]["text"] == f"Copying {whale} stopped."
        # The stop is an event like any other.
        assert events.emit(user, "config.stopped", f"config.stopped:{config.id}:"
                           f"{CopyConfig.get_by_id(config.id).version}") is None
        telegram.say(CHAT, "/start 1")
        _poll(telegram)
        assert telegram.sent()[-1]["text"] == f"Copying {whale} started."
        assert CopyConfig.get_by_id(config.id).is_active
        # A stranger pressing a forged button changes nothing.
        telegram.press(STRANGER, f"stop:{config.id}")
        _poll(telegram)
        assert CopyConfig.get_by_id(config.id).is_active


def test_the_webhook_route_needs_telegrams_secret(tune, client, user):
    with running(FakeTelegram()) as telegram:
        tune(telegram_bot_token=telegram.token, telegram_api_url=telegram.url)
        update = {"update_id": 1, "message": {"chat": {"id": STRANGER, "type": "private"},
                                              "from": {"id": STRANGER}, "text": "/help"}}
        path = "/notifications/telegram/webhook"
        assert client.post(path, json=update).status_code == 403
        answer = client.post(path, json=update, headers={
            "X-Telegram-Bot-Api-Secret-Token": bot_api.webhook_secret()})
        assert answer.status_code == 200
        assert telegram.sent()[-1]["text"].startswith("Sorry")
        assert telegram.sent()[-1]["text"] == telegram_bot.REFUSAL


GROUP, MEMBER = -100777, 31337


def test_a_group_can_neither_link_nor_command_an_account(tune, user):
    with running(FakeTelegram()) as telegram:
        tune(telegram_bot_token=telegram.token, telegram_api_url=telegram.url,
             telegram_poll_seconds=0)
        config = _config(user)
        added = channels.add(user, "telegram")
        # A link code sent in a group is refused and not spent.
        telegram.say(GROUP, f"/start {added.link_code}", sender=CHAT)
        _poll(telegram)
        assert telegram.sent()[-1] == {"chat_id": GROUP, "text": telegram_bot.NOT_PRIVATE,
                                       "disable_web_page_preview": True}
        assert bot_api.linked_user(GROUP) is None
        # A chat linked to a group before groups were refused: its members command nothing
        # and read nothing, the linked person included (not in a private chat).
        channel = added.channel
        NotificationChannel.update(target=str(GROUP), enabled=True).where(
            NotificationChannel.id == channel.id).execute()
        for sender in (MEMBER, CHAT):
            for command in ("/stop 1", "/pnl", "/positions", "/status", "/configs"):
                telegram.say(GROUP, command, sender=sender)
        telegram.press(GROUP, f"stop:{config.id}", sender=MEMBER)
        _poll(telegram)
        answers = telegram.sent()[1:]
        assert len(answers) == 10
        assert {(m["chat_id"], m["text"]) for m in answers} == {
            (GROUP, telegram_bot.NOT_PRIVATE)}
        assert telegram.sent("answerCallbackQuery")[-1]["text"] == \
            "Only in a private chat with me."
        assert CopyConfig.get_by_id(config.id).is_active
        # The upgrade (m0110) turns such a channel off and unlinks it.
        assert m0110.unlink_groups(db.obj) == 1
        unlinked = NotificationChannel.get_by_id(channel.id)
        assert (unlinked.enabled, unlinked.target) == (False, "")
        assert unlinked.disabled_reason == m0110.GROUP_LINK
        assert bot_api.linked_user(GROUP) is None
        # The person links in a private chat with the same code: now theirs alone.
        telegram.say(CHAT, f"/start {added.link_code}")
        telegram.say(CHAT, "/stop 1")
        _poll(telegram)
        assert telegram.sent()[-2]["text"].startswith("Linked.")
        assert telegram.sent()[-1]["text"] == f"Stop copying {copy_notices.trader(config)}?"
        telegram.press(CHAT, f"stop:{config.id}")
        _poll(telegram)
        assert not CopyConfig.get_by_id(config.id).is_active


def test_pnl_and_positions_answer_from_the_linked_users_account(
        tune, trader, make_sandbox_market, venue_control):
    market = make_sandbox_market()
    bought = _place(trader, market.yes, "buy", "10", "market")
    assert bought.status == "matched"
    with running(FakeTelegram()) as telegram:
        tune(telegram_bot_token=telegram.token, telegram_api_url=telegram.url,
             telegram_poll_seconds=0)
        added = channels.add(trader.user, "telegram")
        telegram.say(CHAT, f"/start {added.link_code}")
        telegram.say(CHAT, "/pnl")
        telegram.say(CHAT, "/positions")
        telegram.say(STRANGER, "/positions")
        _poll(telegram)
        linked, pnl, held, refused = (m for m in telegram.sent())
    assert linked["text"].startswith("Linked.")
    summary = stats.user_summary(trader.user)
    assert pnl == {"chat_id": CHAT, "text": f"Total PnL {numbers.pnl(summary['total_pnl'])} "
                   f"(realized {numbers.pnl(summary['realized_pnl'])}), 1 filled trade.",
                   "disable_web_page_preview": True}
    [position] = positions.list_positions(trader.user)
    assert held["text"] == (f"10.00 shares of “{position['market_title'] or market.slug}” "
                            f"({position['outcome']}): {numbers.money(position['current_value'])}")
    assert refused["chat_id"] == STRANGER and refused["text"] == telegram_bot.REFUSAL


def test_with_an_https_base_url_the_worker_registers_the_webhook_instead_of_polling(
        tune, app, user):
    with running(FakeTelegram()) as telegram:
        tune(telegram_bot_token=telegram.token, telegram_api_url=telegram.url,
             settings={"base_url": "https://copytrade.example"})
        assert bot_api.uses_webhook()

        async def briefly() -> None:
            with trio.move_on_after(1.0):
                await jobs_notifications.run_telegram(object())

        trio.run(briefly)
        [registered] = telegram.sent("setWebhook")
        assert registered["url"] == "https://copytrade.example/notifications/telegram/webhook"
        assert registered["secret_token"] == bot_api.webhook_secret()
        assert telegram.sent("getUpdates") == []  # no long polling beside it
        tune(telegram_bot_token=telegram.token, telegram_api_url=telegram.url,
             settings={"base_url": "http://127.0.0.1:5000"})
        assert not bot_api.uses_webhook()  # an http BASE_URL: long polling
