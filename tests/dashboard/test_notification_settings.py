"""Notification channels and preferences in a real browser, at desktop and phone width: add a
webhook (its secret shown once verifies a test sent over real HTTP, with the reference
package), rotate it, add email, refuse a private URL naming the field, switch events and
thresholds per channel, remove a channel; axe finds no serious or critical violation."""

from __future__ import annotations

import re
from dataclasses import replace
from decimal import Decimal

from playwright.sync_api import expect

from models import User
from models.notifications import NotificationChannel
from services.notifications import preferences
from services.platform import runtime
from tests.conftest import DEADLINE
from tests.dashboard.conftest import sign_in
from tests.dashboard.test_trader_pages import accessible_and_fits_a_phone
from tests.notifications.fakes import WebhookReceiver, running
from tests.worker.conftest import prefix  # noqa: F401 - the fixture: Redis keys of its own


def _allow_loopback(set_settings) -> None:
    current = runtime.runtime().settings
    set_settings(notifications=replace(current.notifications, allow_loopback_urls=True,
                                       send_deadline_seconds=DEADLINE))


def test_channels_and_preferences_from_the_dashboard(page, inbox, set_settings):
    _allow_loopback(set_settings)
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    page.goto("/dashboard/notifications")
    page.click("#notification-settings")
    page.wait_for_url("**/dashboard/notifications/settings")
    assert page.locator("#no-channels").is_visible()
    accessible_and_fits_a_phone(page, "notification-settings-empty")
    # axe leaves style="" on what it measured; htmx would copy it onto swapped elements of
    # the same id, which the page's CSP refuses: go on with a fresh page.
    page.reload()

    with running(WebhookReceiver()) as hook:
        page.select_option("#channel-kind", "webhook")
        page.fill("#channel-url", hook.url + "/hook")
        page.fill("#channel-form input[name=label]", "my server")
        page.click("#channel-form button[type=submit]")
        secret = page.locator("#channel-secret").inner_text()
        assert re.fullmatch(r"whsec_[A-Za-z0-9+/=]+", secret), secret
        hook.secrets.append(secret)
        [row] = page.locator("tr[data-kind=webhook]").all()
        row.locator("button:has-text('Send a test')").click()
        tested = row.locator(".tested")
        tested.wait_for()
        assert tested.get_attribute("data-status") == "sent", tested.inner_text()
        assert len(hook.received) == 1 and hook.rejected == 0  # signed with that secret
        # The secret never comes back: the page reloaded shows none.
        page.reload()
        assert secret not in page.content()
        row = page.locator("tr[data-kind=webhook]")
        row.locator("button:has-text('Rotate secret')").click()
        rotated = row.locator(".secret-value").inner_text()
        assert rotated.startswith("whsec_") and rotated != secret
        hook.secrets[:] = [rotated]  # a receiver on the new secret alone still verifies
        row.locator("button:has-text('Send a test')").click()
        expect(row.locator(".tested")).to_have_attribute("data-status", "sent")
        assert len(hook.received) == 2 and hook.rejected == 0

    # A private address is refused, naming the field; nothing is added.
    page.select_option("#channel-kind", "discord")
    page.fill("#channel-url", "https://10.1.2.3/api/webhooks/1/x")
    page.click("#channel-form button[type=submit]")
    expect(page.locator("#channel-errors")).to_contain_text("url")
    # Telegram without a bot: said plainly.
    page.select_option("#channel-kind", "telegram")
    page.fill("#channel-url", "")
    page.click("#channel-form button[type=submit]")
    expect(page.locator("#channel-errors")).to_contain_text("Telegram is not set up")
    page.select_option("#channel-kind", "email")
    page.click("#channel-form button[type=submit]")
    expect(page.locator("#channel-created")).to_have_attribute("data-kind", "email")
    assert page.locator("tr[data-channel-id]").count() == 2

    webhook = NotificationChannel.get(NotificationChannel.user == user,
                                      NotificationChannel.kind == "webhook")
    section = page.locator(f"#prefs-{webhook.id}")
    section.locator("summary").click()
    form = section.locator("form")
    form.locator("input[name='on:copy.skipped']").uncheck()
    form.locator("input[name='min:copy.filled']").fill("12.5")
    form.locator("input[name='reasons:config.stopped']").fill("loss_stop, drawdown")
    form.locator("button[type=submit]").click()
    expect(section.locator("[role=status]")).to_have_text("Saved.")
    rules = {(r["event_type"], r["channel_id"]): r for r in preferences.list_preferences(user)}
    assert rules[("copy.skipped", webhook.id)]["enabled"] is False
    assert rules[("copy.filled", webhook.id)]["min_amount"] == Decimal("12.5")
    assert rules[("config.stopped", webhook.id)]["reasons"] == ["loss_stop", "drawdown"]
    assert rules[("copy.skipped", None)]["enabled"] is True  # the app's own untouched
    # A bad threshold is refused, naming it.
    form = section.locator("form")
    form.locator("input[name='min:copy.filled']").fill("lots")
    form.locator("button[type=submit]").click()
    expect(section.locator("form [id^=preferences-errors]")).to_contain_text("min_amount")
    page.reload()
    section = page.locator(f"#prefs-{webhook.id}")
    section.locator("summary").click()
    accessible_and_fits_a_phone(page, "notification-settings")
    page.reload()  # a fresh page again (see above)

    page.locator("tr[data-kind=email] button:has-text('Remove')").click()
    expect(page.locator("tr[data-channel-id]")).to_have_count(1)
    assert not NotificationChannel.select().where(NotificationChannel.kind == "email").exists()


def test_a_telegram_chat_linked_from_the_dashboard_gets_pushed_events(
        page, inbox, set_settings, prefix):  # noqa: F811 - the fixture (the poller's offset)
    """Add Telegram on the page, send its one-time code from a chat of the fake Bot API, the
    bot links it, the page shows the chat, and an event reaches that chat."""
    from models.notifications import NotificationDelivery
    from services.notifications import deliveries, events
    from tests.notifications.fakes import FakeTelegram
    from worker import jobs_notifications

    chat = 4242
    with running(FakeTelegram()) as telegram:
        current = runtime.runtime().settings
        set_settings(notifications=replace(
            current.notifications, telegram_bot_token=telegram.token,
            telegram_api_url=telegram.url, telegram_poll_seconds=0,
            telegram_bot_username="copytrade_bot"))
        email = sign_in(page, inbox)
        user = User.get(User.email == email)
        page.goto("/dashboard/notifications/settings")
        page.select_option("#channel-kind", "telegram")
        page.click("#channel-form button[type=submit]")
        expect(page.locator("#channel-created")).to_have_attribute("data-kind", "telegram")
        command = page.locator("#channel-link-code").inner_text()
        code = command.removeprefix("/start ")
        assert re.fullmatch(r"/start \S{6,}", command), command
        assert page.locator(f"#channel-created a[href='https://t.me/copytrade_bot?start="
                            f"{code}']").count() == 1
        row = page.locator("tr[data-kind=telegram]")
        expect(row).to_contain_text("not linked yet")
        assert row.locator(".badge").inner_text() == "off"

        telegram.say(chat, command)  # the chat sends the code; the worker's poller reads it
        assert jobs_notifications.poll_telegram("test-worker")
        assert telegram.sent()[-1]["chat_id"] in (chat, str(chat))
        assert telegram.sent()[-1]["text"].startswith("Linked.")

        page.reload()
        row = page.locator("tr[data-kind=telegram]")
        assert row.locator(".badge").inner_text() == "on"
        assert "not linked yet" not in row.inner_text()
        assert str(chat) in row.locator("td[data-label='Sends to']").inner_text()
        assert page.locator("#channel-link-code").count() == 0  # the code was shown once

        channel = NotificationChannel.get(NotificationChannel.user == user,
                                          NotificationChannel.kind == "telegram")
        events.emit(user, "config.out_of_funds", "oof:dash", trader="whale",
                    amount=Decimal(5), balance=Decimal(1))
        [delivery] = NotificationDelivery.select().where(
            NotificationDelivery.channel == channel)
        assert deliveries.deliver(delivery.id) == "sent"
        pushed = telegram.sent()[-1]
        assert pushed["chat_id"] == str(chat)
        assert pushed["text"].startswith("Out of funds\nCopying whale cannot continue")
        # The page's "Send a test" reaches the same chat.
        before = len(telegram.sent())
        row.locator("button:has-text('Send a test')").click()
        expect(row.locator(".tested")).to_have_attribute("data-status", "sent")
        assert len(telegram.sent()) == before + 1
        assert telegram.sent()[-1]["chat_id"] == str(chat)
