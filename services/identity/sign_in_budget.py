"""Sign-in budgets: emails sent and wrong codes, per address and per client IP, across codes.

A code is 6 digits and each one allows a few tries, so the limit that matters is the one
across codes: an address that collects ``SIGN_IN_MISSES_PER_ADDRESS`` wrong codes within
``SIGN_IN_WINDOW_SECONDS`` is locked (every code refused, the right one too, with 429
``rate_limited`` and Retry-After) until the oldest of those misses leaves the window. A
client IP has a larger budget of its own, and each address and IP a budget of emails.

The events are rows in the database, not Redis counters: the general rate limits fail
open when Redis is down, these must not. Each check writes its event first (committed at
once, outside any transaction) and then counts, so of many racing requests no more than
the budget's worth see a count within it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

import peewee

from models import SignInEvent
from models.base import utcnow
from services.platform import errors, ratelimit
from services.platform.runtime import runtime

EMAIL = "email"
MISS = "miss"
UNKNOWN_IP = "unknown"
_LOCKED = ("Too many attempts: sign-in for this address is paused. Use the emailed link, or "
           "try again later.")
_BUSY_IP = "Too many sign-in attempts from this address; try again later."


def _client(ip: str | None) -> str:
    return ratelimit.client_key(ip, UNKNOWN_IP)  # an IPv6 client is its /64


def _recent(kind: str, column: peewee.Field, value: str, since: datetime) -> peewee.Query:
    return SignInEvent.select().where(SignInEvent.kind == kind, column == value,
                                      SignInEvent.created_at > since)


def _wait_until_under(kind: str, column: peewee.Field, value: str, budget: int,
                      window: timedelta, now: datetime) -> int | None:
    """Seconds until fewer than ``budget`` events remain in the window; None if already so."""
    query = _recent(kind, column, value, now - window)
    count = query.count()
    if count < budget:
        return None
    # The lock lifts once count - budget + 1 of the events have left the window.
    pivot = (query.order_by(SignInEvent.created_at).offset(count - budget)
             .limit(1).first())
    left = (pivot.created_at + window - now).total_seconds() if pivot else 1
    return max(1, math.ceil(left))


def take_email(email: str, ip: str | None) -> bool:
    """Spend one sign-in email: False when the address's budget is spent (send none, say
    nothing); RateLimited (429) when the client IP's is."""
    budget, now, client = runtime().settings.sign_in, utcnow(), _client(ip)
    window = timedelta(seconds=budget.window_seconds)
    event = SignInEvent.create(kind=EMAIL, email=email, ip=client, created_at=now)
    since = now - window
    if _recent(EMAIL, SignInEvent.ip, client, since).count() > budget.emails_per_ip:
        event.delete_instance()
        wait = _wait_until_under(EMAIL, SignInEvent.ip, client, budget.emails_per_ip,
                                 window, now)
        raise errors.RateLimited(_BUSY_IP, retry_after=wait or 1)
    if _recent(EMAIL, SignInEvent.email, email, since).count() > budget.emails_per_address:
        event.delete_instance()
        return False
    return True


@dataclass(frozen=True)
class Attempt:
    """One code try, counted as a miss until ``succeeded`` forgives it."""

    event: SignInEvent

    def succeeded(self) -> None:
        """The code was right: this try is not a miss."""
        self.event.delete_instance()


def begin_try(email: str, ip: str | None) -> Attempt:
    """Count a code try against the address and the IP; RateLimited (429) while either is
    locked out (the right code is refused too)."""
    budget, now, client = runtime().settings.sign_in, utcnow(), _client(ip)
    window = timedelta(seconds=budget.window_seconds)
    event = SignInEvent.create(kind=MISS, email=email, ip=client, created_at=now)
    since = now - window
    for column, value, allowed, message in (
            (SignInEvent.email, email, budget.misses_per_address, _LOCKED),
            (SignInEvent.ip, client, budget.misses_per_ip, _BUSY_IP)):
        if _recent(MISS, column, value, since).count() > allowed:
            event.delete_instance()  # refused unchecked: not a miss
            wait = _wait_until_under(MISS, column, value, allowed, window, now)
            raise errors.RateLimited(message, retry_after=wait or 1)
    return Attempt(event)


def purge_before(cutoff: datetime) -> int:
    """Delete events older than ``cutoff`` (they no longer count); how many went."""
    return SignInEvent.delete().where(SignInEvent.created_at < cutoff).execute()
