"""The opened venue accounts of the copiers an engine runs, and their collateral estimates.

Placing a copy order needs the copier's signing key (sealed at rest), its venue API
credentials (sealed too) and enough pUSD. Opening the seals and asking the venue for the
balance on every order cost more than the rest of the copy, so an engine keeps, per user
whose configs it runs:

- the ``VenueAccount`` (opened key with its address derived, credentials), opened once
  when a config of that user starts running here and re-opened every
  ``reopen_seconds``; dropped as soon as none of the user's configs runs here, and all of
  them when the engine stops. The key lives only in this process's memory and is never
  logged (``VenueAccount`` and ``OrderKey`` hide it in their repr).
- a collateral estimate: the venue's balance figure as last read (refreshed every
  ``refresh_seconds``, and at once before an order would be skipped for want of it),
  minus what orders in flight may spend and what settled orders spent since. The venue
  still refuses an order the wallet cannot pay, so the estimate only spares a request.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from uuid import UUID

from services.wallets.venue_accounts import VenueAccount

ZERO = Decimal(0)


@dataclass
class WalletSlot:
    """One copier's opened account and collateral estimate (guarded by ``lock``)."""

    account: VenueAccount
    opened_at: float
    balance: Decimal | None = None     # venue figure at the last refresh, minus spends since
    refreshed_at: float = 0.0
    reserved: Decimal = ZERO           # what orders in flight may still spend
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def available(self) -> Decimal | None:
        """pUSD the next order may use (None: unknown, ask the venue)."""
        if self.balance is None:
            return None
        return self.balance - self.reserved

    def reserve(self, amount: Decimal) -> None:
        """Hold ``amount`` for an order about to be sent (call under ``lock``)."""
        self.reserved += amount

    def release(self, reserved: Decimal, spent: Decimal) -> None:
        """An order settled: free its reservation and take what it spent (negative: received)."""
        with self.lock:
            self.reserved = max(ZERO, self.reserved - reserved)
            if self.balance is not None:
                self.balance -= spent

    def refreshed(self, balance: Decimal, at: float) -> None:
        """The venue's figure now (orders in flight keep their reservations)."""
        with self.lock:
            self.balance = balance
            self.refreshed_at = at


class AccountCache:
    """Per-user ``WalletSlot``s of one engine (thread-safe: placement runs in threads)."""

    def __init__(self, refresh_seconds: float = 15.0, reopen_seconds: float = 600.0,
                 clock: Callable[[], float] | None = None) -> None:
        self.refresh_seconds = refresh_seconds
        self.reopen_seconds = reopen_seconds
        self._clock = clock or time.monotonic
        self._slots: dict[UUID, WalletSlot] = {}
        self._lock = threading.Lock()

    def now(self) -> float:
        """The cache's clock (monotonic seconds)."""
        return self._clock()

    def get(self, user_id: UUID) -> WalletSlot | None:
        """The user's slot, if opened here."""
        with self._lock:
            return self._slots.get(user_id)

    def put(self, user_id: UUID, account: VenueAccount) -> WalletSlot:
        """Keep a freshly opened account (its balance estimate, if any, carries over)."""
        with self._lock:
            old = self._slots.get(user_id)
            slot = WalletSlot(account=account, opened_at=self.now())
            if old is not None:
                slot.balance, slot.refreshed_at = old.balance, old.refreshed_at
                slot.reserved = old.reserved
            self._slots[user_id] = slot
            return slot

    def missing(self, user_ids: Iterable[UUID]) -> list[UUID]:
        """Users without an opened account here, or whose account is due to be re-opened."""
        cutoff = self.now() - self.reopen_seconds
        with self._lock:
            return [u for u in dict.fromkeys(user_ids)
                    if u not in self._slots or self._slots[u].opened_at < cutoff]

    def stale(self, max_age: float | None = None) -> list[tuple[UUID, WalletSlot]]:
        """Slots whose balance figure is older than ``max_age`` (default: the refresh period)."""
        cutoff = self.now() - (self.refresh_seconds if max_age is None else max_age)
        with self._lock:
            return [(u, s) for u, s in self._slots.items() if s.refreshed_at <= cutoff]

    def retain(self, user_ids: Iterable[UUID]) -> list[UUID]:
        """Drop every slot but these users' (their configs stopped running here); the dropped."""
        keep = set(user_ids)
        with self._lock:
            gone = [u for u in self._slots if u not in keep]
            for user_id in gone:
                del self._slots[user_id]
        return gone

    def drop(self, user_id: UUID) -> None:
        """Forget one user's account (e.g. the venue refused its credentials)."""
        with self._lock:
            self._slots.pop(user_id, None)

    def clear(self) -> None:
        """Forget every opened account (the engine stops)."""
        with self._lock:
            self._slots.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._slots)

    def __contains__(self, user_id: object) -> bool:
        with self._lock:
            return user_id in self._slots


__all__ = ["AccountCache", "WalletSlot"]
