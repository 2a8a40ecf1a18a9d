"""Events in, deliveries out: recorded once, signed, retried with backoff, digested in bursts,
a 410 turns the channel off; webhook URLs are checked."""

from __future__ import annotations

import json
import time
from decimal import Decimal

import pytest
from standardwebhooks.webhooks import Webhook

from models.notifications import (
    Notification,
    NotificationChannel,
    NotificationDelivery,
)
from services.notifications import channels, deliveries, events, inbox, preferences, urls
from services.notifications import secrets as channel_secrets
from services.notifications import telegram as telegram_api
from services.platform import errors
from services.platform.runtime import runtime
from tests.notifications.fakes import Fake, FakeTelegram, WebhookReceiver, running


def _deliver_all() -> list[str]:
    return [deliveries.deliver(d.id) for d in NotificationDelivery.select().where(
        NotificationDelivery.status == "pending")]


def _point(channel: NotificationChannel, url: str) -> None:
    """Store ``url`` as the channel's address, as a row saved earlier would hold it."""
    channel_secrets.seal_url(channel, url)


def _webhook(user, receiver: WebhookReceiver) -> NotificationChannel:
    added = channels.add(user, "webhook", url=receiver.url + "/hook", label="mine")
    assert added.secret.startswith("whsec_")
    receiver.secrets.append(added.secret)
    return added.channel


def test_an_event_is_recorded_once_and_reaches_the_webhook_signed(tune, user):
    with running(WebhookReceiver()) as receiver:
        channel = _webhook(user, receiver)
        first = events.emit(user, "copy.filled", "copy.filled:1", side="Bought",
                            size=Decimal("10"), market="Will it rain?", price=Decimal("0.42"),
                            amount=Decimal("4.2"), trader="whale", link="/dashboard/trades")
        again = events.emit(user, "copy.filled", "copy.filled:1", amount=Decimal("99"))
        assert first is not None and again is None
        assert Notification.select().count() == 1
        assert _deliver_all() == ["sent"]
        [body] = receiver.bodies()
        assert receiver.rejected == 0
        assert body["type"] == "copy.filled"
        assert body["data"]["text"] == ("Bought 10.00 shares of “Will it rain?” at 0.42 for "
                                        "4.20 pUSD (copy of whale).")
        # Third-party text reaches machines inside the envelope.
        assert body["data"]["payload"]["market"] == {
            "untrusted_data": {"source": "third_party", "text": "Will it rain?"}}
        assert body["data"]["payload"]["amount"] == "4.2"
        assert body["data"]["link"].endswith("/dashboard/trades")
        assert receiver.event_ids() == [str(first.id)]
        log = channels.delivery_log(user, channel.id).items
        assert log[0]["status"] == "sent" and log[0]["status_code"] == 200
        assert log[0]["latency_ms"] is not None


def test_a_receiver_down_gets_retries_with_backoff_then_the_delivery_fails(tune, user):
    tune(retry_seconds=(30, 120, 600, 3600))
    with running(WebhookReceiver(status=503)) as receiver:
        _webhook(user, receiver)
        events.emit(user, "account.ready", "account.ready:1")
        [delivery] = NotificationDelivery.select()
        waits = []
        for _attempt in range(4):
            before = time.time()
            assert deliveries.deliver(delivery.id) == "pending"
            delivery = NotificationDelivery.get_by_id(delivery.id)
            waits.append(round(delivery.next_attempt_at.timestamp() - before, -1))
            # Not due yet: the job does nothing.
            assert deliveries.deliver(delivery.id) == "pending"
            NotificationDelivery.update(next_attempt_at=delivery.created_at).where(
                NotificationDelivery.id == delivery.id).execute()
        assert waits == [30, 120, 600, 3600]
        assert deliveries.deliver(delivery.id) == "failed"
        failed = NotificationDelivery.get_by_id(delivery.id)
        assert failed.attempts == 5 and failed.last_status_code == 503
        assert failed.last_error == "the receiver answered 503"


def test_a_receiver_answering_410_turns_the_channel_off_and_the_user_is_told(tune, user):
    with running(WebhookReceiver(status=410)) as receiver:
        channel = _webhook(user, receiver)
        events.emit(user, "deposit.received", "deposit:1", amount=Decimal("5"), token="pUSD")
        assert _deliver_all() == ["failed"]
    channel = NotificationChannel.get_by_id(channel.id)
    assert not channel.enabled and "410" in channel.disabled_reason
    page = inbox.list_notifications(user).items
    assert page[0]["type"] == "channel.disabled"
    assert "turned off" in page[0]["text"] and "410" in page[0]["text"]
    # Nothing more is queued to it.
    events.emit(user, "deposit.received", "deposit:2", amount=Decimal("6"), token="pUSD")
    pending = NotificationDelivery.select().where(NotificationDelivery.status == "pending")
    assert pending.count() == 0


def test_a_burst_becomes_one_digest(tune, user):
    # The twelve events must land within one window however busy the machine: 3 s.
    window = 3.0
    tune(burst=3, burst_window_seconds=window)
    with running(WebhookReceiver()) as receiver:
        _webhook(user, receiver)
        for n in range(12):
            events.emit(user, "config.breaker_opened", f"breaker:{n}", trader="whale",
                        reason="three failures in a row")
        emitted = time.monotonic()
        assert _deliver_all() == ["sent"] * 3
        # The held ones are digested once the window passed since they were made.
        time.sleep(max(0.0, emitted + window + 0.1 - time.monotonic()))
        assert deliveries.tick()["digests"] == 1
        assert _deliver_all() == ["sent"]
        bodies = receiver.bodies()
        assert len(bodies) == 4
        assert bodies[-1]["type"] == "digest"
        assert bodies[-1]["data"]["text"].startswith("9 notifications arrived in a burst: "
                                                     "9 × Copying paused")  # noqa: RUF001
    # The app still lists every one.
    assert inbox.unread_count(user) == 12


def test_preferences_and_thresholds_choose_what_a_channel_gets(tune, user):
    with running(WebhookReceiver()) as receiver:
        channel = _webhook(user, receiver)
        preferences.set_preferences(user, [
            {"event_type": "copy.skipped", "channel_id": channel.id, "enabled": True,
             "min_amount": Decimal("10"), "reasons": ["insufficient_balance"]},
            {"event_type": "order.filled", "channel_id": channel.id, "enabled": False},
            {"event_type": "order.filled", "channel_id": None, "enabled": False},
        ])
        events.emit(user, "copy.skipped", "s:1", amount=Decimal("50"), reason="slippage")
        events.emit(user, "copy.skipped", "s:2", amount=Decimal("5"),
                    reason="insufficient_balance")
        events.emit(user, "copy.skipped", "s:3", amount=Decimal("50"),
                    reason="insufficient_balance")
        events.emit(user, "order.filled", "o:1", amount=Decimal("1"))
        assert _deliver_all() == ["sent"]
        assert [b["data"]["event_id"] for b in receiver.bodies()] == ["s:3"]
    # order.filled is off in the app too; the skips are listed.
    assert [n["data"].get("reason") for n in inbox.list_notifications(user).items] == [
        "insufficient_balance", "insufficient_balance", "slippage"]
    rows = preferences.list_preferences(user)
    chosen = next(r for r in rows if r["channel_id"] == channel.id
                  and r["event_type"] == "copy.skipped")
    assert chosen["min_amount"] == Decimal("10")


def test_rotating_the_secret_signs_with_both_during_the_overlap(tune, user):
    with running(WebhookReceiver()) as receiver:
        channel = _webhook(user, receiver)
        old = receiver.secrets[0]
        rotated = channels.rotate_secret(user, channel.id)
        events.emit(user, "account.ready", "ready:1")
        _deliver_all()
        [request] = receiver.received
        # A receiver still on the old secret, and one on the new, both verify.
        Webhook(old).verify(request.body, request.headers)
        Webhook(rotated["secret"]).verify(request.body, request.headers)
        assert len(request.headers["webhook-signature"].split(" ")) == 2
        tune(rotation_overlap_seconds=0)
        channels.rotate_secret(user, channel.id)
        events.emit(user, "account.ready", "ready:2")
        receiver.secrets[:] = [old]
        _deliver_all()
        assert receiver.rejected == 1  # the old secret no longer signs


@pytest.mark.parametrize(("url", "why"), [
    ("http://example.com/hook", "The URL must use https."),
    ("https://10.0.0.7/hook", "The host resolves to a private or reserved address."),
    ("https://127.0.0.1/hook", "The host resolves to a private or reserved address."),
    ("ftp://example.com/hook", "The URL must use https."),
    ("https://user:pw@example.com/", "Give an https URL with a host name, no user name or "
                                     "fragment."),
])
def test_a_webhook_url_must_be_https_to_a_public_address(tune, user, url, why):
    tune(allow_loopback_urls=False)
    with pytest.raises(errors.ValidationFailed) as raised:
        channels.add(user, "webhook", url=url)
    assert raised.value.details["fields"] == {"url": [why]}


EMBEDDED_PRIVATE_IPV4 = [
    "64:ff9b::a00:7",  # NAT64 of 10.0.0.7
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b:1::a00:7",  # local-use NAT64 prefix (RFC 8215)
    "::a00:7",  # IPv4-compatible 10.0.0.7
    "::a9fe:a9fe",  # IPv4-compatible 169.254.169.254 (cloud metadata)
    "2002:a00:7::1",  # 6to4 of 10.0.0.7
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "::ffff:10.0.0.7",  # IPv4-mapped
    "2001:0:4136:e378:8000:63bf:f5ff:fff8",  # Teredo, client 10.0.0.7
]


@pytest.mark.parametrize("address", EMBEDDED_PRIVATE_IPV4)
def test_an_ipv6_form_of_a_private_ipv4_address_is_refused_at_save_and_at_send(
        tune, user, address):
    tune(allow_loopback_urls=False)
    url = f"https://[{address}]/hook"
    with pytest.raises(errors.ValidationFailed) as raised:
        channels.add(user, "webhook", url=url)
    assert raised.value.details["fields"] == {
        "url": ["The host resolves to a private or reserved address."]}
    # A name resolving to it is refused the same way.
    with pytest.raises(errors.ValidationFailed):
        urls.check("https://hook.example/x", "url", runtime().settings.notifications,
                   resolver=lambda _: {address})
    # A row saved before the guard knew these forms: the send refuses it, for good.
    tune(allow_loopback_urls=True)
    channel = channels.add(user, "webhook", url="http://127.0.0.1:9/hook").channel
    tune(allow_loopback_urls=False)
    _point(channel, url)
    events.emit(user, "account.ready", f"ready:{address}")
    assert _deliver_all() == ["failed"]
    [entry] = channels.delivery_log(user, channel.id).items
    assert entry["attempts"] == 1 and entry["error"] == "This URL's host is not allowed."


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "2002:808:808::1", "2606:4700::1111"])
def test_an_ipv6_form_of_a_public_ipv4_address_is_allowed(tune, address):
    tune(allow_loopback_urls=False)
    url = "https://hook.example/x"
    assert urls.check(url, "url", runtime().settings.notifications,
                      resolver=lambda _: {address}) == url


def test_loopback_http_is_refused_unless_allowed(tune, user):
    tune(allow_loopback_urls=False)
    with pytest.raises(errors.ValidationFailed):
        channels.add(user, "webhook", url="http://127.0.0.1:9/hook")
    tune(allow_loopback_urls=True)
    assert channels.add(user, "webhook", url="http://127.0.0.1:9/hook").channel.enabled


def test_mark_read(tune, user):
    for n in range(3):
        events.emit(user, "deposit.received", f"d:{n}", amount=Decimal(n + 1), token="pUSD")
    [newest, *_] = inbox.list_notifications(user).items
    assert inbox.mark_read(user, [newest["id"]]) == {"marked": 1, "unread": 2}
    assert inbox.mark_read(user) == {"marked": 2, "unread": 0}
    assert json.loads(Notification.get_by_id(newest["id"]).payload)["amount"] == "3"


def test_a_send_is_refused_when_the_url_now_leads_to_a_private_address(tune, user):
    # Accepted while loopback was allowed; at the send, the guarded client checks the
    # address it connects to again: refused, nothing reaches the receiver, not retried.
    with running(WebhookReceiver()) as receiver:
        channel = _webhook(user, receiver)
        tune(allow_loopback_urls=False)
        events.emit(user, "account.ready", "ready:private")
        assert _deliver_all() == ["failed"]
        assert receiver.received == []
    [entry] = channels.delivery_log(user, channel.id).items
    assert entry["attempts"] == 1 and entry["status_code"] is None
    assert entry["error"]


LINK_BAIT = "[Claim refund](https://evil.example/claim)"
SLACK_BAIT = "<https://evil.example/claim|Claim refund> <!channel>"


def test_venue_text_reaches_chat_channels_as_text_never_as_a_link(tune, user):
    with running(Fake()) as discord, running(Fake()) as slack, \
            running(FakeTelegram()) as telegram:
        tune(discord_url_prefix=discord.url + "/api/webhooks/",
             slack_url_prefix=slack.url + "/services/", telegram_bot_token=telegram.token,
             telegram_api_url=telegram.url)
        channels.add(user, "discord", url=discord.url + "/api/webhooks/1/abc")
        channels.add(user, "slack", url=slack.url + "/services/T/B/x")
        assert telegram_api.link(channels.add(user, "telegram").link_code, 4242)
        events.emit(user, "copy.filled", "copy.filled:bait", side="Bought", size=Decimal(1),
                    market=f"Will it rain? **{SLACK_BAIT}**", price=Decimal("0.5"),
                    amount=Decimal("0.5"), trader=LINK_BAIT)
        assert sorted(_deliver_all()) == ["sent"] * 3
        [posted] = discord.bodies()
        content = posted["content"]
        # Discord: every markdown character escaped, so no masked link, no bare link, no bold.
        assert LINK_BAIT not in content and "https://evil" not in content
        assert r"\[Claim refund\]\(https\://evil.example/claim\)" in content
        assert r"\*\*\<https\://evil" in content
        assert posted["allowed_mentions"] == {"parse": []}
        # Slack: <, > and & escaped, so no <url|text> link and no <!channel>.
        [said] = slack.bodies()
        assert "<https://evil" not in said["text"] and "<!channel>" not in said["text"]
        assert "&lt;https://evil.example/claim|Claim refund&gt; &lt;!channel&gt;" in said["text"]
        # Telegram: plain text, no parse mode, so no markup of any kind.
        [pushed] = telegram.sent()
        assert "parse_mode" not in pushed and LINK_BAIT in pushed["text"]
