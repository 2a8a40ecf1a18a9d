"""Wallet jobs: sending withdrawals and redeeming claims (blocking web3, so worker threads).

Each takes the id of its durable record and is safe to run again: the signed transaction
is persisted before it is broadcast, and a re-run only re-sends those bytes.
"""

from __future__ import annotations

from services import claims, collateral, onboarding, withdrawals
from worker.jobs import job


@job(withdrawals.JOB_NAME)
def send_withdrawal(withdrawal_id: str) -> str:
    """Sign (once), broadcast and settle a withdrawal; return its final status."""
    return withdrawals.send(withdrawal_id)


@job(claims.JOB_NAME)
def redeem_claim(claim_id: str) -> str:
    """Approve if needed, redeem (once) and settle a claim; return its final status."""
    return claims.redeem(claim_id)


@job(onboarding.JOB_NAME)
def onboard_account(onboarding_id: str) -> str:
    """Run a trading account's onboarding from where it stands; return its status."""
    return onboarding.run(onboarding_id)


@job(collateral.JOB_NAME)
def wrap_usdc_e(wrap_id: str) -> str:
    """Wrap a deposit wallet's USDC.e into pUSD (once); return the wrap's status."""
    return collateral.run(wrap_id)
