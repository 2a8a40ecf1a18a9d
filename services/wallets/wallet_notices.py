"""What the user is told about their money and their account (services/notifications): a
withdrawal done or unclear, a claim done or winnings to claim, a deposit seen, the account
ready, the venue slowing the account's orders. Each event's id is the record's own (or the
episode's), so a job that runs again tells nothing twice.

``on_rate_warning`` is the venue client's rate-limit warning observer (venue/http.py calls it
on every ``Poly-RateLimit-Warning``, on the copy engine's hot path too): it only queues job
``wallets.notify_throttled``, at most once an hour per signer and kind in this process; the
job finds the signer's user and, unless any process told them about that budget within the
hour (a Redis key living an hour), emits ``venue.throttled:<user>:<kind>:<hour>``.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta
from decimal import Decimal
from uuid import UUID

from peewee import fn

from models.base import utcnow
from models.notifications import Notification
from models.wallet import (
    AMBIGUOUS,
    CONFIRMED,
    AccountOnboarding,
    Claim,
    TradingWallet,
    Withdrawal,
)
from services.markets import catalogue
from services.notifications import events
from services.platform import jobs
from venue import http as venue_http

log = logging.getLogger(__name__)

THROTTLE_JOB = "wallets.notify_throttled"
THROTTLED_KINDS = ("orders", "cancels")  # the per-signer budgets (venue/budgets.py)
# A rolling hour, not the clock's: warnings at 10:59:59 and 11:00:01 are one episode.
NOTICE_EVERY = timedelta(hours=1)
_queued: dict[tuple[str, str], datetime] = {}  # (signer, kind): when this process queued
_queued_lock = threading.Lock()

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
                    link="/dashboard/positions", amount=row.payout,
                    market=row.market_slug or row.condition_id, claim_id=row.id,
                    **catalogue.named(row.market_slug))


def claim_available(user_id: UUID | str, condition_id: str, market: str,
                    amount: Decimal) -> bool:
    """claim.available: a resolved market pays the user (once per user and market);
    whether this call told them."""
    return events.emit(user_id, "claim.available", f"claim.available:{user_id}:{condition_id}",
                       link="/dashboard/wallet", amount=amount, market=market,
                       condition_id=condition_id, **catalogue.named(market)) is not None


def deposit_received(user_id: UUID | str, transfer: str, amount: Decimal, token: str) -> None:
    """deposit.received: ``amount`` of ``token`` came in from outside, by chain transfer
    ``transfer`` (``<tx hash>:<log index>``: told once)."""
    events.emit(user_id, "deposit.received", f"deposit.received:{transfer}",
                link="/dashboard/wallet", amount=amount, token=token,
                tx_hash=transfer.split(":", 1)[0])


def deposits_told(user_id: UUID | str, transfers: list[str]) -> set[str]:
    """Which of these transfers the user was already told about."""
    if not transfers:
        return set()
    keys = {f"deposit.received:{t}": t for t in transfers}
    return {keys[row.key] for row in Notification.select(Notification.key).where(
        Notification.user == user_id, Notification.key.in_(list(keys)))}


def account_ready(onboarding_id: UUID | str) -> None:
    """account.ready: onboarding finished."""
    row = AccountOnboarding.get_by_id(UUID(str(onboarding_id)))
    events.emit(row.wallet.user_id, "account.ready", f"account.ready:{row.id}",
                link="/dashboard/account")


def on_rate_warning(signer: str, kind: str, limit: float | None, text: str) -> None:
    """The venue warned ``signer`` and its budget of ``kind`` backed off to ``limit`` per
    10 s: queue the notice (at most once an hour per signer and kind here; never raises,
    never waits on the database)."""
    if not signer or kind not in THROTTLED_KINDS or limit is None:
        return
    now = utcnow()
    key = (signer.lower(), kind)
    with _queued_lock:
        last = _queued.get(key)
        if last is not None and now - last < NOTICE_EVERY:
            return
        for old in [k for k, at in _queued.items() if now - at >= NOTICE_EVERY]:
            del _queued[old]  # bounded by the signers warned within the hour
        _queued[key] = now
    hour = now.strftime("%Y%m%d%H")
    try:
        jobs.enqueue(THROTTLE_JOB, key[0], kind, int(limit), hour, text[:200], queue="low",
                     job_id=jobs.logical_job_id(THROTTLE_JOB, *key, hour))
    except Exception:  # Redis down costs the notice, never the order
        log.warning("venue.throttled for %s not queued", signer, exc_info=True)


def venue_throttled(signer: str, kind: str, limit: int, hour: str, text: str) -> bool:
    """venue.throttled for the user whose trading key is ``signer``, unless they were told
    about ``kind`` within the hour by any process; whether someone was told."""
    wallet = TradingWallet.get_or_none(fn.LOWER(TradingWallet.address) == signer.lower())
    if wallet is None:
        return False
    told = f"{jobs.current_config().prefix}venue-throttled:{wallet.user_id}:{kind}"
    if not jobs.connection().set(told, hour, nx=True,
                                 px=int(NOTICE_EVERY.total_seconds() * 1000)):
        return False  # this budget's episode was told less than an hour ago
    return events.emit(wallet.user_id, "venue.throttled",
                       f"venue.throttled:{wallet.user_id}:{kind}:{hour}",
                       link="/dashboard/configs", kind=kind, limit=int(limit),
                       venue_message=text) is not None


# The venue layer knows nothing of ours; it reports each rate-limit warning to its observers.
venue_http.add_warning_observer(on_rate_warning)
