"""Does the chain agree with the database? Deposit wallets recorded as deployed that the
chain holds no code for (a local chain started afresh beside a kept database)."""

from __future__ import annotations

from models.wallet import (
    SIGNATURE_TYPE_DEPOSIT_WALLET,
    STEP_DEPLOY,
    AccountOnboarding,
    TradingWallet,
)
from services.platform import chain_access
from services.wallets import wallets


def undeployed_wallets() -> list[str]:
    """The deposit wallets whose onboarding got past deploying them but which have no code
    on the configured chain."""
    web3 = chain_access.web3()
    rows = (TradingWallet.select().join(AccountOnboarding)
            .where(TradingWallet.signature_type == SIGNATURE_TYPE_DEPOSIT_WALLET,
                   AccountOnboarding.step != STEP_DEPLOY))
    return [maker for maker in (wallets.maker(row) for row in rows)
            if not web3.eth.get_code(web3.to_checksum_address(maker))]
