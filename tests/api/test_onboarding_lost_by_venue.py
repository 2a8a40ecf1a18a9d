"""Onboarding recorded as done while the venue says the deposit wallet is not deployed (a
local chain started afresh beside a kept database): never "ready" beside "not deployed";
REST, the Account page and readiness show it failed, with the way out."""

from __future__ import annotations

from typing import Any

from models.wallet import ONBOARDING_READY, STEP_DONE
from services.wallets import onboarding, readiness, wallets
from tests.trading_support import take_queued


def test_a_ready_onboarding_the_venue_does_not_know_is_shown_failed(
        client: Any, auth_headers: Any, user: Any, venue_control: Any) -> None:
    wallet = wallets.get_or_create(user)
    row = take_queued(wallet)
    row.status, row.step = ONBOARDING_READY, STEP_DONE
    row.save()

    answer = client.get("/api/trading-account", headers=auth_headers).get_json()
    assert (answer["status"], answer["ready"], answer["error"]) == (
        "failed", False, onboarding.LOST_BY_VENUE)
    assert [step["state"] for step in answer["steps"]] == ["failed", "done", "done", "done"]
    seen = readiness.readiness(user)
    assert not seen["onboarding"]["ready"]
    assert {"code": "wallet_not_deployed", "message": onboarding.LOST_BY_VENUE} in seen["blockers"]

    # the venue knows the wallet again: ready, as recorded
    venue_control.call("POST", "/deposit-wallets", {"wallet": wallets.maker(wallet),
                                                    "owner": wallet.address}, expect=200)
    answer = client.get("/api/trading-account", headers=auth_headers).get_json()
    assert (answer["status"], answer["ready"], answer["error"]) == ("ready", True, None)
