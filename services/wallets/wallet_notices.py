"""What the user is told about their money (services/notifications): a withdrawal done or
unclear, a claim done, a deposit seen, the account ready. Each event's id is the record's
own, so a job that runs again tells nothing twice."""

from __future__ import annotations

from decimal import Decimal
from uuid import UUID

from models.wallet import AMBIGUOUS, CONFIRMED, AccountOnboarding, Claim, Withdrawal
from services.notifications import events

TOKEN_NAMES = {"usdc": "pUSD", "usdc_e": "USDC.e", "matic": "MATIC"}


def withdrawal_outcome(withdrawal_id: UUID | str) -> None:
    """withdrawal.completed once confirmed; withdrawal.ambiguous while it may or may not
    have gone through."""
    row = Withdrawal.get_by_id(UUID(str(withdrawal_id)))
    kind = {CONFIRMED: "withdrawal.completed", AMBIGUOUS: "withdrawal.ambiguous"}.get(row.status)
    if kind is not None:
        events.emit(row.user_id, kind, f"{kind}:{row.id}", link="/dashboard/wallet",
                    amount=row.amount, token=TOKEN_NAMES.get(row.token, row.token),
                    to_address=row.to_address, withdrawal_id=row.id)


def claim_outcome(claim_id: UUID | str) -> None:
    """claim.completed once the redemption is confirmed."""
    row = Claim.get_by_id(UUID(str(claim_id)))
    if row.status == CONFIRMED:
        events.emit(row.user_id, "claim.completed", f"claim.completed:{row.id}",
                    link="/dashboard/positions", amount=row.expected_payout,
                    market=row.market_slug or row.condition_id, claim_id=row.id)


def claim_available(user_id: UUID | str, condition_id: str, market: str,
                    amount: Decimal) -> None:
    """claim.available: a resolved market pays the user (once per market)."""
    events.emit(user_id, "claim.available", f"claim.available:{user_id}:{condition_id}",
                link="/dashboard/positions", amount=amount, market=market)


def deposit_received(user_id: UUID | str, wallet_id: UUID | str, amount: Decimal,
                     balance: Decimal, token: str = "pUSD") -> None:
    """deposit.received: the wallet's balance went up by ``amount`` to ``balance``."""
    events.emit(user_id, "deposit.received", f"deposit.received:{wallet_id}:{token}:{balance}",
                link="/dashboard/wallet", amount=amount, token=token, balance=balance)


def account_ready(onboarding_id: UUID | str) -> None:
    """account.ready: onboarding finished."""
    row = AccountOnboarding.get_by_id(UUID(str(onboarding_id)))
    events.emit(row.wallet.user_id, "account.ready", f"account.ready:{row.id}",
                link="/dashboard/account")
