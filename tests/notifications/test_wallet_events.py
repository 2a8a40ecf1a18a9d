"""The money events from the product's own jobs, each told once over real HTTP to a webhook
receiver checking signatures with the reference package: on the dev chain, an account
becoming ready, a pUSD deposit, winnings to claim and their claim; on the sandbox relayer, a
withdrawal done and one left ambiguous."""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import Any

from models.notifications import Notification
from services.notifications import channels
from services.wallets import claims, deposits, withdrawals
from tests.chain_venue import run_queued_jobs
from tests.notifications.fakes import WebhookReceiver, running
from tests.services.wallets.test_relayer_claims_chain import _pusd, holding_winners
from tests.services.wallets.test_relayer_lifecycle import stale_signed_withdrawal
from tests.wallet_fixtures import USDC
from worker import jobs_wallets, maintenance


def _hook(user: Any, hook: WebhookReceiver, tune: Any) -> None:
    tune(burst=100)
    added = channels.add(user, "webhook", url=hook.url + "/hook")
    hook.secrets.append(added.secret)


def _told(hook: WebhookReceiver) -> list[str]:
    run_queued_jobs()
    return [body["type"] for body in hook.bodies()]


def test_an_accounts_life_on_chain_is_told_as_it_happens(tune, accounts_venue, user, prefix):
    dev = accounts_venue.chain.contracts
    with running(WebhookReceiver()) as hook:
        _hook(user, hook, tune)
        # Onboarding (the worker's job) makes the account ready; its winnings resolve.
        wallet, maker, condition = holding_winners(accounts_venue, user, 6)
        assert _told(hook) == ["account.ready"]
        dev.mint(dev.pusd, maker, 40 * USDC)
        deposits.sweep()
        assert _told(hook)[1:] == ["deposit.received"]
        assert hook.bodies()[1]["data"]["payload"]["amount"] == "40"
        assert hook.bodies()[1]["data"]["text"] == "40.00 pUSD arrived in your trading wallet."
        # USDC.e sent in is a deposit too; the sweep wraps it, and the pUSD the wrap mints
        # is no second deposit.
        dev.mint(dev.usdce, maker, 5 * USDC)
        deposits.sweep()
        assert _told(hook)[2:] == ["deposit.received"]  # the wrap's job runs here too
        assert hook.bodies()[2]["data"]["text"] == "5.00 USDC.e arrived in your trading wallet."
        assert _pusd(accounts_venue, maker) == 45 * USDC  # wrapped
        deposits.sweep()
        assert _told(hook)[3:] == []
        maintenance.schedule_claim_sweep()
        assert _told(hook)[3:] == ["claim.available"]
        claims.claim(user, wait_seconds=0)
        assert _told(hook)[4:] == ["claim.completed"]
        completed = hook.bodies()[4]["data"]
        assert completed["payload"]["amount"] == "6"
        assert completed["payload"]["market"]["untrusted_data"]["source"] == "third_party"
        # The payout is the claim's, not a deposit: the next look tells nothing more.
        deposits.sweep()
        assert _told(hook)[5:] == []
        # A second pUSD deposit after all that is told, once.
        dev.mint(dev.pusd, maker, 2 * USDC)
        deposits.sweep()
        deposits.sweep()
        assert _told(hook)[5:] == ["deposit.received"]
        assert hook.bodies()[5]["data"]["payload"]["amount"] == "2"
        assert hook.rejected == 0
    assert wallet.user_id == user.id and condition.condition_id


def test_a_withdrawal_done_and_one_left_ambiguous_are_told(tune, make_trader,
                                                           venue_control,
                                                           prefix):
    trader = make_trader("100", deposit_wallet=True)
    with running(WebhookReceiver()) as hook:
        _hook(trader.user, hook, tune)
        dest = "0x" + secrets.token_hex(20)
        withdrawals.withdraw(trader.user, dest, Decimal("30"), "usdc", wait_seconds=0)
        assert _told(hook) == ["withdrawal.completed"]
        done = hook.bodies()[0]["data"]
        assert done["payload"]["amount"] == "30" and done["text"].startswith("30.00 pUSD sent to ")
        row = stale_signed_withdrawal(trader, Decimal("5"))
        assert jobs_wallets.send_withdrawal(str(row.id)) == "ambiguous"
        assert _told(hook)[1:] == ["withdrawal.ambiguous"]
        assert "may or may not have gone through" in hook.bodies()[1]["data"]["text"]
        # Run again while it stays ambiguous: told once.
        jobs_wallets.send_withdrawal(str(row.id))
        assert _told(hook)[2:] == []
    assert Notification.select().where(Notification.type.startswith("withdrawal.")).count() == 2
