"""Copiers' collateral figures shared by the deployment's engines, and the read budget.

Every engine running one of a user's live configs keeps that user's collateral estimate.
Read from the venue by each of them, a deployment of N workers would read every copier
N times at a start (and N times per refresh period), against the venue's one limit on
balance reads. So the venue's figure is read once per deployment and kept in Redis with
the time it was read (``SharedBalances``): an engine takes the shared figure while it is
younger than ``wallet_refresh_seconds``, and only the engine that claims a stale one
(``SET NX``, for ``CLAIM_SECONDS``) reads it again. The reads an engine does send stay
within its share of ``COPY_BALANCE_READS_PER_SECOND`` (``ReadBudget``), at a start and a
take-over too.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any
from uuid import UUID

import redis

CLAIM_SECONDS = 5.0  # a claimed read not published by then may be claimed by another engine
KEEP_SECONDS = 3600  # a shared figure nobody refreshes any more goes away


class SharedBalances:
    """The venue's collateral figures in Redis: user -> (balance, wall time read)."""

    def __init__(self, client: redis.Redis, prefix: str, name: str,
                 call: Callable[..., Awaitable[Any]]) -> None:
        self.client = client
        self.prefix = prefix
        self.name = name
        self._call = call  # runs a blocking Redis call off the event loop

    def _key(self, user_id: UUID) -> str:
        return f"{self.prefix}copy:balance:{user_id}"

    def _claim_key(self, user_id: UUID) -> str:
        return f"{self.prefix}copy:balance-read:{user_id}"

    async def get(self, user_ids: Sequence[UUID]) -> dict[UUID, tuple[Decimal, float]]:
        """The shared figures of these users that exist: (balance, age in seconds)."""
        if not user_ids:
            return {}
        values = await self._call(self.client.mget, [self._key(u) for u in user_ids])
        now = time.time()
        found = {}
        for user_id, value in zip(user_ids, values, strict=True):
            if value is None:
                continue
            try:
                balance, read_at = value.decode().split("@")
                found[user_id] = (Decimal(balance), max(0.0, now - float(read_at)))
            except (ValueError, InvalidOperation):  # a malformed value: read it again
                continue
        return found

    async def claim(self, user_ids: Sequence[UUID]) -> list[UUID]:
        """The users whose read this engine takes (no other engine is reading them)."""
        if not user_ids:
            return []

        def claim_all() -> list[bool]:
            pipe = self.client.pipeline(transaction=False)
            for user_id in user_ids:
                pipe.set(self._claim_key(user_id), self.name, nx=True,
                         px=int(CLAIM_SECONDS * 1000))
            return pipe.execute()

        won = await self._call(claim_all)
        return [u for u, ok in zip(user_ids, won, strict=True) if ok]

    async def release(self, user_ids: Sequence[UUID]) -> None:
        """End claims this engine will not read after all."""
        if user_ids:
            await self._call(self.client.delete, *[self._claim_key(u) for u in user_ids])

    async def put(self, user_id: UUID, balance: Decimal, read_at: float) -> None:
        """Share a figure read from the venue at wall time ``read_at``, ending the claim."""
        def write() -> None:
            pipe = self.client.pipeline(transaction=False)
            pipe.set(self._key(user_id), f"{balance}@{read_at}", ex=KEEP_SECONDS)
            pipe.delete(self._claim_key(user_id))
            pipe.execute()

        await self._call(write)


class ReadBudget:
    """This engine's share of the deployment's balance-read rate: a bucket refilled at
    the share, holding at most one second of it (so no burst goes past the rate)."""

    def __init__(self, rate: Callable[[], float],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._rate = rate  # reads a second this engine may send now
        self._clock = clock
        self._tokens = 0.0
        self._at: float | None = None

    def take(self, wanted: int) -> int:
        """How many of ``wanted`` reads may go now (taken from the budget)."""
        now = self._clock()
        rate = self._rate()
        if self._at is None:
            self._tokens = max(1.0, rate)
        else:  # at least one read in the bucket's reach, however many engines share
            self._tokens = min(max(1.0, rate), self._tokens + (now - self._at) * rate)
        self._at = now
        granted = min(wanted, int(self._tokens))
        self._tokens -= granted
        return granted

    def give(self, count: int) -> None:
        """Give back reads taken and not sent (another engine sends them)."""
        self._tokens += count


__all__ = ["ReadBudget", "SharedBalances"]
