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
from tests.dashboard.conftest import sign_in
from tests.dashboard.test_trader_pages import accessible_and_fits_a_phone
from tests.notifications.fakes import WebhookReceiver, running


def _allow_loopback(set_settings) -> None:
    current = runtime.runtime().settings
    set_settings(notifications=replace(current.notifications, allow_loopback_urls=True,
                                       send_deadline_seconds=5))


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
