"""`copytrade up` names the deposit wallets the database holds as deployed but the local chain
has no code for (a chain started afresh beside a kept database), and only those."""

from __future__ import annotations

from typing import Any

from models.wallet import STEP_APPROVALS, STEP_DEPLOY
from services.wallets import chain_agreement, wallets
from tests.trading_support import take_queued


def test_a_deposit_wallet_past_its_deployment_without_code_on_the_chain_is_named(
        bound_db: Any, user: Any, wallet_chain: Any) -> None:
    wallet = wallets.get_or_create(user)
    onboarding = take_queued(wallet)
    assert onboarding.step == STEP_DEPLOY
    assert chain_agreement.undeployed_wallets() == []  # not deployed yet: nothing to say

    onboarding.step = STEP_APPROVALS  # the database believes it deployed
    onboarding.save()
    assert chain_agreement.undeployed_wallets() == [wallets.maker(wallet)]

    # the wallet as this chain's factory deployed it
    wallet.funder_address = wallet_chain.contracts.deploy_deposit_wallet(wallet.address)
    wallet.save()
    assert chain_agreement.undeployed_wallets() == []
