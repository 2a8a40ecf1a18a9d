"""What a follower is told about their copies, from the engine's own path: a copy filled, a
copy skipped for lack of pUSD and the config out of funds, each queued by the engine as the
``copying.notify`` job, run as the worker runs it, and received over real HTTP by a webhook
receiver checking signatures with the reference package. Told once each."""

from __future__ import annotations

from decimal import Decimal

from models.base import db
from models.market import Market as MarketRow
from models.notifications import Notification
from services.notifications import channels
from services.platform.numbers import money
from tests.chain_venue import run_queued_jobs
from tests.notifications.conftest import tune  # noqa: F401 - the fixture
from tests.notifications.fakes import WebhookReceiver, running
from tests.worker.conftest import prefix  # noqa: F401 - the fixture
from tests.worker.copy_engine.conftest import inject, owned, settled, wait_for

JOBS = {"copying.notify", "notifications.deliver"}


def _hook(user, hook: WebhookReceiver) -> None:
    with db.connection_context():
        added = channels.add(user, "webhook", url=hook.url + "/hook")
    hook.secrets.append(added.secret)


def test_a_filled_copy_a_skipped_one_and_out_of_funds_are_told_once(
        tune, prefix, run_engines, make_config, make_trader, market, target,  # noqa: F811
        venue_control):
    tune(burst=100)
    rich, poor = make_trader(), make_trader(funds="1")
    filled_config = make_config(rich.user, target, size_multiplier=Decimal("0.5"),
                                target_name="whale")
    poor_config = make_config(poor.user, target)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "20", "0.5")
        await wait_for(settled(filled_config))
        await wait_for(settled(poor_config))

    with running(WebhookReceiver()) as rich_hook, running(WebhookReceiver()) as poor_hook:
        _hook(rich.user, rich_hook)
        _hook(poor.user, poor_hook)
        run_engines(scenario)
        ran = run_queued_jobs(only=JOBS)
        assert "copying.notify" in ran
        [filled] = rich_hook.bodies()
        assert filled["type"] == "copy.filled"
        assert filled["data"]["payload"]["size"] == "10"
        assert filled["data"]["payload"]["trader"] == {"untrusted_data": {
            "source": "third_party", "text": "whale"}}
        # Words: the market by its question and outcome (synced into the catalogue by the
        # job), amounts as money, the trader by name and short address; never the slug.
        with db.connection_context():
            question = MarketRow.get(MarketRow.slug == market.slug).title
        short = f"{target[:6]}…{target[-4:]}"
        assert filled["data"]["text"] == (
            f"Bought 10.00 shares of “{question}” (Yes) at 0.51 for 5.10 pUSD (copy of "
            f"whale ({short})).")
        assert filled["data"]["payload"]["market"] == {"untrusted_data": {
            "source": "third_party", "text": market.slug}}  # machines keep the slug
        out_of_funds, skipped = sorted(poor_hook.bodies(), key=lambda b: b["type"])
        assert skipped["type"] == "copy.skipped"
        assert skipped["data"]["payload"]["reason"] == "insufficient_balance"
        amount = money(skipped["data"]["payload"]["amount"])
        assert skipped["data"]["text"] == (
            f"A {amount} trade of {short} on “{question}” (Yes) was not copied: not enough "
            "pUSD in the trading wallet.")
        assert out_of_funds["type"] == "config.out_of_funds"
        assert out_of_funds["data"]["text"] == (
            f"Copying {short} cannot continue: {amount} needed, more than the trading wallet "
            "holds. Deposit pUSD to resume.")
        texts = skipped["data"]["text"] + filled["data"]["text"] + out_of_funds["data"]["text"]
        rest = texts.replace(f"“{question}”", "")  # the sandbox's question holds the slug
        assert "?" not in rest and market.slug not in rest
        # The job run again (a worker retrying it) tells nothing twice.
        from services.copying import copy_notices

        with db.connection_context():
            intents = [i.id for i in settled(filled_config)() + settled(poor_config)()]
            assert copy_notices.emit_outcomes(intents) == 2
        run_queued_jobs(only=JOBS)
        assert len(rich_hook.received) == 1 and len(poor_hook.received) == 2
        assert rich_hook.rejected == poor_hook.rejected == 0
    with db.connection_context():
        assert Notification.select().where(Notification.user == poor.user.id).count() == 2
