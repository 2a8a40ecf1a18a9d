"""Every event reaches every channel through a real worker over real HTTP: a webhook receiver
verifying signatures with the reference package, Discord and Slack fakes, a fake Telegram Bot
API with a linked chat, an SMTP inbox; a receiver down for a while (backoff shortened) then
back gets every event exactly once; and with the real backoff on a shifted clock, a receiver
down for two minutes gets every event exactly once."""

from __future__ import annotations

import time
from datetime import timedelta
from decimal import Decimal
from typing import Any

import trio
from aiosmtpd.controller import Controller

from config import NotificationConfig
from models.base import db
from models.notifications import NotificationDelivery
from services.notifications import catalogue, channels, deliveries, email_links, events
from services.notifications import telegram as telegram_api
from services.notifications.providers.discord import discord_escape
from services.platform.runtime import runtime
from tests.conftest import free_port
from tests.mail_inbox import Inbox
from tests.notifications.fakes import Fake, FakeTelegram, WebhookReceiver, running
from tests.worker.conftest import wait_for
from worker import jobs as job_table
from worker.host import WorkerHost, WorkerSettings

PAYLOADS: dict[str, dict[str, Any]] = {
    "copy.filled": {"side": "Bought", "size": Decimal(10), "price": Decimal("0.5"),
                    "amount": Decimal(5), "market": "Rain?", "trader": "whale"},
    "copy.skipped": {"amount": Decimal(50), "reason": "slippage", "market": "Rain?",
                     "trader": "whale"},
    "copy.unconfirmed": {"trader": "whale", "market": "Rain?", "reason": "reverted",
                         "what": "it filled and stays (nothing was sold)"},
    "config.stopped": {"trader": "whale", "reason": "stopped by you"},
    "config.breaker_opened": {"trader": "whale", "reason": "three failures"},
    "config.buys_paused": {"trader": "whale", "reason": "stop_unverified"},
    "config.out_of_funds": {"trader": "whale", "amount": Decimal(5), "balance": Decimal(1)},
    "order.filled": {"side": "Sold", "size": Decimal(3), "price": Decimal("0.7"),
                     "amount": Decimal("2.1"), "market": "Rain?"},
    "order.failed": {"market": "Rain?", "reason": "FAILED settlement"},
    "claim.available": {"amount": Decimal(7), "market": "Rain?"},
    "claim.completed": {"amount": Decimal(7), "market": "Rain?"},
    "withdrawal.completed": {"amount": Decimal(9), "to_address": "0xabc"},
    "withdrawal.ambiguous": {"amount": Decimal(9), "to_address": "0xabc"},
    "deposit.received": {"amount": Decimal(20), "token": "pUSD"},
    "account.ready": {},
    "feed.degraded": {"reason": "the live feed is down"},
    "venue.throttled": {"kind": "orders", "limit": 1750, "venue_message": "slow down"},
    "agent.confirmation": {"agent": "API key “bot”", "summary": "Buy 10 shares of “Rain?”.",
                           "confirmation_id": "5d1c0a52-6a55-4b8e-9d7e-2f1c3b4a5e6f"},
}


CHAT = 5151


def run_worker(redis_url: str, prefix: str, body: Any) -> None:
    """A worker in-process (the production job table) with the notifications tick."""
    job_table.load_modules()
    settings = WorkerSettings(redis_url=redis_url, prefix=prefix, capacity=4, grace_seconds=2,
                              heartbeat_seconds=0.5, poll_seconds=0.05)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            host = await nursery.start(WorkerHost(settings).run)

            async def ticking() -> None:
                while True:
                    await trio.to_thread.run_sync(deliveries.tick)
                    await trio.sleep(0.1)

            nursery.start_soon(ticking)
            try:
                await body(host)
            finally:
                nursery.cancel_scope.cancel()
                host.request_shutdown()

    trio.run(main)


def test_every_event_reaches_every_channel_and_a_receiver_down_loses_nothing(
        tune, user, redis_url, prefix, app):
    assert set(PAYLOADS) == set(catalogue.USER_EVENT_TYPES)
    inbox = Inbox()
    smtp = Controller(inbox, hostname="127.0.0.1", port=free_port())
    smtp.start()
    # Retries after 0.3, 0.6, 1.2, 2.4 s: a receiver down ~2 s is outlived (the real
    # schedule is 30 s, 2 min, 10 min, 1 h: two minutes down is outlived the same way).
    tune(retry_seconds=(0.3, 0.6, 1.2, 2.4), burst=100,
         settings={"smtp_url": f"smtp://127.0.0.1:{smtp.port}"})
    try:
        with (running(WebhookReceiver(status=503)) as hook, running(Fake()) as discord,
              running(Fake()) as slack, running(FakeTelegram()) as telegram):
            tune(retry_seconds=(0.3, 0.6, 1.2, 2.4), burst=100,
                 discord_url_prefix=discord.url + "/api/webhooks/",
                 slack_url_prefix=slack.url + "/services/",
                 telegram_bot_token=telegram.token, telegram_api_url=telegram.url,
                 telegram_poll_seconds=1,
                 settings={"smtp_url": f"smtp://127.0.0.1:{smtp.port}"})
            added = channels.add(user, "webhook", url=hook.url + "/hook")
            hook.secrets.append(added.secret)
            channels.add(user, "discord", url=discord.url + "/api/webhooks/1/abc")
            channels.add(user, "slack", url=slack.url + "/services/T/B/x")
            email = channels.add(user, "email").channel
            assert telegram_api.link(channels.add(user, "telegram").link_code, CHAT)
            for name, payload in PAYLOADS.items():
                events.emit(user, name, f"{name}:e2e", link="/dashboard", **payload)
                events.emit(user, name, f"{name}:e2e", **payload)  # the same event again
            total = len(PAYLOADS)

            async def body(host: Any) -> None:
                await wait_for(lambda: len(discord.received) == total)
                await wait_for(lambda: len(slack.received) == total)
                await wait_for(lambda: len(inbox.messages) == total)
                await wait_for(lambda: len(telegram.sent()) == total)
                # The webhook receiver was down all along: its deliveries wait to retry.
                assert hook.received == []
                started = time.monotonic()
                await trio.sleep(2.0)
                hook.status = 200  # back up
                await wait_for(lambda: len(hook.received) == total)
                assert time.monotonic() - started >= 2.0
                await trio.sleep(1.0)  # nothing more arrives: each event once

            run_worker(redis_url, prefix, body)
            assert len(hook.received) == total and hook.rejected == 0
            assert sorted(hook.event_ids()) == sorted(set(hook.event_ids()))
            assert {b["type"] for b in hook.bodies()} == set(PAYLOADS)
            retried = NotificationDelivery.select().where(NotificationDelivery.attempts > 1)
            assert retried.count() >= total
            assert {d.status for d in NotificationDelivery.select()} == {"sent"}
            # Same wording everywhere, from the one template.
            texts = {b["data"]["text"] for b in hook.bodies()}
            assert all(any(discord_escape(t) in b["content"] for t in texts)
                       for b in discord.bodies())
            for body in discord.bodies():
                assert body["allowed_mentions"] == {"parse": []}
            assert all(b["text"].startswith("*") for b in slack.bodies())
            pushed = telegram.sent()
            assert {m["chat_id"] for m in pushed} == {str(CHAT)}
            assert all(any(t in m["text"] for t in texts) for m in pushed)
            # Never a secret in a message: not the webhook's signing secret, not the bot's
            # token, not the server's own key.
            secret_words = (added.secret, added.secret.removeprefix("whsec_"), telegram.token,
                            runtime().settings.secret_key)
            everything = [r.body.decode() for fake in (hook, discord, slack, telegram)
                          for r in fake.received]
            everything += [message.as_string() for _rcpt, message in inbox.messages]
            assert not [word for word in secret_words for text in everything if word in text]
            _rcpt, message = inbox.messages[0]
            url = email_links.unsubscribe_url(email.id)
            assert message["List-Unsubscribe"] == f"<{url}>"
            assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    finally:
        smtp.stop()


def test_with_the_real_backoff_a_receiver_down_two_minutes_gets_every_event_once(
        tune, user, redis_url, prefix, app, monkeypatch):
    real_schedule = NotificationConfig().retry_seconds
    assert real_schedule == (30, 120, 600, 3600)
    tune(retry_seconds=real_schedule, burst=100)
    # The senders' clock runs ahead by hand (a fault injected into time, nothing else):
    # the worker, its jobs, the tick and the receiver are the real ones.
    ahead = {"seconds": 0.0}
    real_now = deliveries.utcnow
    monkeypatch.setattr(deliveries, "utcnow",
                        lambda: real_now() + timedelta(seconds=ahead["seconds"]))
    total = len(PAYLOADS)

    def attempted(times: int) -> bool:
        with db.connection_context():
            rows = list(NotificationDelivery.select())
        return len(rows) == total and all(
            d.attempts == times and d.status in ("pending", "sent") for d in rows)

    with running(WebhookReceiver(status=503)) as hook:
        added = channels.add(user, "webhook", url=hook.url + "/hook")
        hook.secrets.append(added.secret)
        for name, payload in PAYLOADS.items():
            events.emit(user, name, f"{name}:down", **payload)

        async def body(host: Any) -> None:
            await wait_for(lambda: attempted(1))  # at 0 s: down
            ahead["seconds"] = 31
            await wait_for(lambda: attempted(2))  # at 30 s: down
            ahead["seconds"] = 120
            hook.status = 200  # back after two minutes; the next try is due at 150 s
            await trio.sleep(1.0)
            assert hook.received == [] and attempted(2)
            ahead["seconds"] = 152
            await wait_for(lambda: len(hook.received) == total)
            await trio.sleep(1.0)  # nothing more arrives: each event once

        run_worker(redis_url, prefix, body)
    assert len(hook.received) == total and hook.rejected == 0
    assert len(set(hook.event_ids())) == total
    assert {b["type"] for b in hook.bodies()} == set(PAYLOADS)
    rows = list(NotificationDelivery.select())
    assert {(d.status, d.attempts) for d in rows} == {("sent", 3)}
