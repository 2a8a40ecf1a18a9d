"""Wallet jobs: sending withdrawals and redeeming claims (blocking web3, so worker threads).

Each takes the id of its durable record and is safe to run again: the signed transaction
is persisted before it is broadcast, and a re-run only re-sends those bytes.
"""

from __future__ import annotations

from models.wallet import ONBOARDING_READY
from services.trading import resolved_positions
from services.wallets import (
    claims,
    collateral,
    deposits,
    onboarding,
    wallet_notices,
    withdrawals,
)
from worker.jobs import job


@job(withdrawals.JOB_NAME)
def send_withdrawal(withdrawal_id: str) -> str:
    """Sign (once), broadcast and settle a withdrawal; return its final status."""
    status = withdrawals.send(withdrawal_id)
    wallet_notices.withdrawal_outcome(withdrawal_id)
    return status


@job(claims.JOB_NAME)
def redeem_claim(claim_id: str) -> str:
    """Approve if needed, redeem (once) and settle a claim; return its final status."""
    status = claims.redeem(claim_id)
    resolved_positions.close_claimed(claim_id)  # the copy positions it redeemed close
    wallet_notices.claim_outcome(claim_id)
    return status


@job(onboarding.JOB_NAME)
def onboard_account(onboarding_id: str) -> str:
    """Run a trading account's onboarding from where it stands; return its status."""
    status = onboarding.run(onboarding_id)
    if status == ONBOARDING_READY:
        wallet_notices.account_ready(onboarding_id)
    return status


@job(collateral.JOB_NAME)
def wrap_usdc_e(wrap_id: str) -> str:
    """Wrap a deposit wallet's USDC.e into pUSD (once); return the wrap's status."""
    return collateral.run(wrap_id)


@job(claims.SWEEP_JOB)
def sweep_claims() -> int:
    """Tell every ready account's owner about winnings to claim (claim.available); how many
    were told."""
    return claims.sweep_available(deposits.ready_wallets().iterator())


@job(wallet_notices.THROTTLE_JOB)
def notify_throttled(signer: str, kind: str, limit: int, hour: str, text: str) -> bool:
    """Tell the signer's user that the venue slowed their orders (venue.throttled)."""
    return wallet_notices.venue_throttled(signer, kind, limit, hour, text)


@job(deposits.SWEEP_JOB)
def sweep_deposits() -> int:
    """Look at every ready account's maker: wrap USDC.e, refresh the venue on a deposit;
    return how many accounts were looked at."""
    return len(deposits.sweep())


@job(deposits.CHECK_JOB)
def check_deposits(wallet_id: str) -> int:
    """The same look at one account (after onboarding, on opening the account page)."""
    return len(deposits.check_wallet(wallet_id))
