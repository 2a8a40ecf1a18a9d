"""The first live copy after funding (issue 16, "no manual step besides funding"): a copy
engine that opened a deposit-wallet copier's account while it held nothing sees a deposit
the CLOB has not re-read yet, because a short estimate makes it ask the venue with
``/balance-allowance/update`` before skipping the copy."""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import Any

import trio

from models import User
from services.wallets import onboarding, wallets
from tests.worker.copy_engine.conftest import inject, owned, settled, wait_for


def test_a_deposit_after_the_engine_opened_the_account_is_copied_with(
        venue_control, make_config, run_engines, market, target, bound_db) -> None:
    venue_control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    user = User.create(email=f"{secrets.token_hex(6)}@example.com", tier="elite")
    wallet = wallets.get_or_create_deposit_wallet(user)
    assert onboarding.run(onboarding.record(wallet).id) == "ready"
    maker = wallet.funder_address
    config = make_config(user, target)

    async def scenario(engines: list[Any]) -> None:
        engine = engines[0]
        await owned(engine, target)

        def opened() -> Any:
            slot = engine.wallets.accounts.get(user.id)
            return slot if slot is not None and slot.balance is not None else None

        slot = await wait_for(opened)
        assert slot.balance == Decimal(0)  # the engine's estimate: nothing to spend
        # The user funds; the CLOB's cache has not seen it (as on the venue).
        await trio.to_thread.run_sync(
            lambda: venue_control.fund(maker, "100", seen=False))
        await inject(venue_control, target, market.yes, "BUY", "40", "0.5")
        [intent] = await wait_for(settled(config))
        assert intent.status == "filled", (intent.reason, intent.detail)

    run_engines(scenario)
