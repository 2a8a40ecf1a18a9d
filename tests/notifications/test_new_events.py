"""The emitters of claim.available (the claim sweep) and venue.throttled (the venue's per-signer
rate-limit warning) end to end: the real condition on the dev chain or the sandbox venue, the
worker's own jobs, and the message arriving over real HTTP at a webhook receiver checking
signatures with the reference package, and at a Discord fake. Each is told once."""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from models.notifications import Notification
from services.notifications import channels
from services.notifications.providers.discord import discord_escape
from services.platform import venues
from services.wallets import claims, deposits, venue_accounts, wallet_notices
from tests.chain_venue import run_queued_jobs
from tests.notifications.fakes import Fake, WebhookReceiver, running
from tests.services.wallets.test_relayer_claims_chain import holding_winners
from worker import maintenance


def _channels(user: Any, hook: WebhookReceiver, discord: Fake, tune: Any) -> None:
    tune(burst=100, discord_url_prefix=discord.url + "/api/webhooks/")
    added = channels.add(user, "webhook", url=hook.url + "/hook")
    hook.secrets.append(added.secret)
    channels.add(user, "discord", url=discord.url + "/api/webhooks/1/abc")


def test_the_claim_sweep_tells_a_holder_of_winnings_once_on_every_channel(
        tune, accounts_venue, user, prefix):
    with running(WebhookReceiver()) as hook, running(Fake()) as discord:
        wallet, _maker, condition = holding_winners(accounts_venue, user, 6)
        run_queued_jobs()  # the onboarding's own (account.ready, before any channel)
        _channels(user, hook, discord, tune)
        assert maintenance.schedule_claim_sweep() is True
        assert maintenance.schedule_claim_sweep() is False  # once per interval
        ran = run_queued_jobs()
        assert claims.SWEEP_JOB in ran and ran.count("notifications.deliver") == 2
        [body] = hook.bodies()
        assert body["type"] == "claim.available"
        payload = body["data"]["payload"]
        assert payload["amount"] == "6" and payload["condition_id"] == condition.condition_id
        assert payload["market"]["untrusted_data"]["source"] == "third_party"
        assert body["data"]["text"].startswith("6.00 pUSD can be claimed from “")
        [chat] = discord.bodies()
        assert discord_escape(body["data"]["text"]) in chat["content"]
        # The next sweep finds the same winnings: nothing more is said.
        assert claims.sweep_available(deposits.ready_wallets().where(
            deposits.TradingWallet.id == wallet.id)) == 0
        run_queued_jobs()
        assert len(hook.received) == 1 and len(discord.received) == 1
        assert Notification.select().where(Notification.type == "claim.available").count() == 1


def test_a_rate_limit_warning_slows_the_signer_and_tells_its_user_once_an_hour(
        tune, trader, venue_control, prefix):
    user = trader.user
    with running(WebhookReceiver()) as hook, running(Fake()) as discord:
        _channels(user, hook, discord, tune)
        venue_control.call("POST", "/signer-limits", {"cancels": 2, "window": 60}, expect=200)
        try:
            account = venue_accounts.account(user)
            clob = venues.client().clob
            for _ in range(5):  # the third and later draw warnings: one notice queued
                clob.cancel_order(account.creds, "0x" + secrets.token_hex(32))
        finally:
            venue_control.call("POST", "/signer-limits", {}, expect=200)
        ran = run_queued_jobs()
        assert ran.count(wallet_notices.THROTTLE_JOB) == 1
        [body] = hook.bodies()
        payload = body["data"]["payload"]
        assert body["type"] == "venue.throttled" and payload["kind"] == "cancels"
        limit = payload["limit"]
        assert isinstance(limit, int) and 1 <= limit < 2
        assert f"at most {limit} cancels per 10 seconds" in body["data"]["text"]
        # The venue's own words are data in the envelope, never part of our text.
        assert payload["venue_message"]["untrusted_data"]["source"] == "third_party"
        assert len(discord.received) == 1
        # Another process queueing the same hour's notice again tells nobody twice.
        assert wallet_notices.venue_throttled(account.wallet.address, "cancels", 1, _hour(),
                                              "again") is False
        assert Notification.select().where(Notification.type == "venue.throttled").count() == 1


def test_warnings_either_side_of_the_hour_tell_the_user_once(trader, prefix, monkeypatch):
    """Once an hour means within any hour, not once per clock hour: a warning at 10:59:59 and
    another at 11:00:01 are one episode, in this process and from another."""
    signer = trader.wallet.address
    now = [datetime(2026, 11, 28, 10, 59, 59, tzinfo=UTC)]
    monkeypatch.setattr(wallet_notices, "utcnow", lambda: now[0])
    wallet_notices.on_rate_warning(signer, "orders", Decimal("1.5"), "slow down")
    now[0] = datetime(2026, 11, 28, 11, 0, 1, tzinfo=UTC)
    wallet_notices.on_rate_warning(signer, "orders", Decimal(1), "slow down")
    assert run_queued_jobs().count(wallet_notices.THROTTLE_JOB) == 1
    # Another process, which queued nothing yet, hears the next warning: nobody is told twice.
    assert wallet_notices.venue_throttled(signer, "orders", 1, "2026112811", "again") is False
    # A different budget is a different episode.
    assert wallet_notices.venue_throttled(signer, "cancels", 1, "2026112811", "x") is True
    told = Notification.select().where(Notification.type == "venue.throttled")
    assert sorted(json.loads(n.payload)["kind"] for n in told) == ["cancels", "orders"]


def _hour() -> str:
    from models.base import utcnow

    return utcnow().strftime("%Y%m%d%H")


def test_a_warning_without_a_known_signer_or_budget_tells_nobody(tune, prefix, user):
    wallet_notices.on_rate_warning("", "orders", Decimal(3), "slow down")  # type: ignore[arg-type]
    wallet_notices.on_rate_warning("0x" + "ab" * 20, "other", None, "slow down")
    assert run_queued_jobs() == []
    assert wallet_notices.venue_throttled("0x" + "cd" * 20, "orders", 3, _hour(), "x") is False
