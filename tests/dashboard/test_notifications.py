"""The notification bell and centre in a real browser; one-click unsubscribe from email."""

from __future__ import annotations

from decimal import Decimal

import httpx
from playwright.sync_api import expect

from models import User
from models.notifications import NotificationChannel
from services.notifications import channels, email_links, events
from tests.dashboard.conftest import screenshot, sign_in


def test_the_bell_counts_unread_and_the_centre_marks_them_read(page, inbox, live_server):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    page.goto("/dashboard/configs")
    page.wait_for_selector("#bell")
    assert page.locator("#bell .badge").count() == 0
    for n in range(3):
        events.emit(user, "copy.skipped", f"skip:{n}", amount=Decimal(20), reason="slippage",
                    market=f"<script>alert({n})</script>", trader="whale",
                    link="/dashboard/configs")
    page.reload()
    badge = page.locator("#bell .badge")
    badge.wait_for()
    assert badge.inner_text() == "3"
    page.click("#bell")
    page.wait_for_url("**/dashboard/notifications")
    assert page.locator(".notifications li.unread").count() == 3
    # Third-party text is shown as text, never run.
    assert "<script>alert(2)</script>" in page.locator(".notifications li").first.inner_text()
    # Its moment as every other page shows one (a <time> in the reader's zone, zone named),
    # not "2026-12-07 21:22 UTC" beside the trades' "Dec 7, 2026, 09:22 PM UTC".
    page.wait_for_selector(".notifications li time[data-local]")
    screenshot(page, "notifications")
    page.locator(".notifications li.unread button:has-text('Mark read')").first.click()
    expect(page.locator(".notifications li.unread")).to_have_count(2)
    page.click("#mark-all-read")
    expect(page.locator(".notifications li.unread")).to_have_count(0)
    page.reload()
    page.wait_for_selector("#bell")
    assert page.locator("#bell .badge").count() == 0


def test_one_click_unsubscribe(live_server, user):
    channel = channels.add(user, "email").channel
    url = email_links.unsubscribe_url(channel.id).replace(
        "http://127.0.0.1:8000", live_server).split("/notifications/")[1]
    link = f"{live_server}/notifications/{url}"
    shown = httpx.get(link)
    assert shown.status_code == 200 and "Unsubscribe" in shown.text
    assert NotificationChannel.get_by_id(channel.id).enabled  # a GET changes nothing
    done = httpx.post(link, data={"List-Unsubscribe": "One-Click"})
    assert done.status_code == 200
    assert not NotificationChannel.get_by_id(channel.id).enabled
    forged = httpx.post(link[:-3] + "abc")
    assert forged.status_code == 404
