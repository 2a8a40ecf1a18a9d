"""What a follower is told about their copies, from the engine's own path: a copy filled, a
copy skipped for lack of pUSD and the config out of funds, each queued by the engine as the
``copying.notify`` job, run as the worker runs it, and received over real HTTP by a webhook
receiver checking signatures with the reference package. Told once each."""

from __future__ import annotations

from decimal import Decimal

from models.base import db
from models.notifications import Notification
from services.notifications import channels
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
        assert filled["data"]["text"].startswith("Bought 10 shares of “")
        assert filled["data"]["text"].endswith("(copy of whale).")
        out_of_funds, skipped = sorted(poor_hook.bodies(), key=lambda b: b["type"])
        assert skipped["type"] == "copy.skipped"
        assert skipped["data"]["payload"]["reason"] == "insufficient_balance"
        assert skipped["data"]["text"].endswith(
            "was not copied: not enough pUSD in the trading wallet.")
        assert out_of_funds["type"] == "config.out_of_funds"
        assert out_of_funds["data"]["text"] == (
            f"Copying {poor_config.target_address[:6]}…{poor_config.target_address[-4:]} "
            f"cannot continue: {skipped['data']['payload']['amount']} pUSD needed, more than "
            "the trading wallet holds. Deposit pUSD to resume.")
        assert "?" not in skipped["data"]["text"] + filled["data"]["text"]
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
