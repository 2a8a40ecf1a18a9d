"""``TargetOwnership``: which targets this engine runs, by lease, in a fair share of them.

Every sweep, targets with no active configs are released; with several live engines,
an engine keeps at most its fair share (active targets / live engines, rounded up) and
hands the surplus back; free targets are claimed up to that share. A target an operator
moved (``copytrade executors move``) never goes back to the engine it left, is taken by
another at once (above its share) and is not shed while the mark lasts. Leases are
renewed every heartbeat, by exception (one short command; only the lost ones come back);
one that could not be renewed was taken over.

Fencing: a claim hands back each lease's new fencing token (``claimed``); the engine
registers it in the database (``fence``) before the target runs, and its intents carry
it (``token``). The lease clock: every claim and renewal notes when it was asked
(``time.monotonic``, before the call: the lease runs from a later moment at Redis), and
``may_send`` is true only until the lease time less the margin has passed since the
oldest of them, so an engine that cannot renew stops sending before any lease of its
can expire, even while Redis and the database are out of its reach.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence, Sized
from typing import Any, Protocol

import redis

from services.platform import copy_leases
from services.platform.copy_leases import TargetLeases

log = logging.getLogger("copytrade.copy_engine")


class OwnedTarget(Protocol):
    """What the share decisions read of a running target."""

    @property
    def configs(self) -> Sized: ...


RedisCall = Callable[..., Awaitable[Any]]


class TargetOwnership:
    """This engine's target leases, heartbeat and fair share (blocking calls run via ``call``)."""

    def __init__(self, client: redis.Redis, prefix: str, name: str, lease_ms: int,
                 call: RedisCall, margin: float = 0.3) -> None:
        self.name = name
        self.prefix = prefix
        self.client = client
        self.leases = TargetLeases(client, prefix, name, lease_ms)
        self._call = call
        # Live engines at the last rebalance: the deployment's venue budgets are shared.
        self.engines = 1
        # Sending stops this long after the last renewal was asked (lease less margin).
        self.safe_seconds = lease_ms / 1000 * (1 - margin)
        self.valid_until = 0.0  # time.monotonic() until which every running lease holds
        self.claimed: dict[str, int] = {}  # new tokens of claimed leases, not yet registered
        self.tokens: dict[str, int] = {}   # registered tokens of the targets running

    def may_send(self) -> bool:
        """True while every lease this engine runs is certainly still its own."""
        return time.monotonic() < self.valid_until

    def token(self, target: str) -> int:
        """The fencing token ``target``'s intents are written under (0, always refused,
        when it is not registered)."""
        return self.tokens.get(target, 0)

    def _asked(self, at: float, running: bool) -> None:
        # A claim cannot extend the leases already running; a renewal of them all can.
        until = at + self.safe_seconds
        self.valid_until = min(self.valid_until, until) if running else until

    async def fence(self, target: str, register: Callable[[str, int], Awaitable[int]]
                    ) -> int | None:
        """Register ``target``'s fencing token (``register`` writes it to the database and
        answers the one now there) before the target runs; the token, or None when this
        engine no longer holds the lease."""
        token = self.claimed.pop(target, None)
        if token is None:  # handed over by an operator: read the token the move set
            token = await self._call(self.leases.adopt, target)
        for _ in range(2):
            if token is None:
                return None
            current = await register(target, token)
            if current == token:
                self.tokens[target] = token
                return token
            # The database has seen a newer token (Redis lost its counters): move past it.
            log.warning("engine %s: target %s's fencing token %d is behind the database's "
                        "%d; moving past it", self.name, target, token, current)
            token = await self._call(self.leases.adopt, target, current)
        return None

    def forget(self, target: str) -> None:
        """The target stopped here: its token is no longer this engine's."""
        self.tokens.pop(target, None)
        self.claimed.pop(target, None)

    async def live_engines(self) -> list[str]:
        """Engines heartbeating now (this one included once it has)."""
        return await self._call(self.leases.live_engines)

    async def heartbeat(self, fields: dict[str, str]) -> None:
        """Announce this engine alive for one lease period."""
        await self._call(self.leases.heartbeat, fields)

    async def renew(self, owned: Sequence[str]) -> set[str]:
        """Extend the leases of ``owned`` (every running target); the ones lost. The lease
        clock restarts from when this was asked.

        By exception: Redis keeps the set of this engine's leases, and one short command
        extends them all and names only the lost ones. When that set does not hold as many
        leases as ``owned`` (a claim or release that went astray, Redis that lost it), the
        leases of ``owned`` are renewed by name instead, and the set becomes them again.
        """
        asked = time.monotonic()
        lost_keys = await self._call(self.leases.renew_held, len(owned))
        if lost_keys is None:
            kept = await self._call(self.leases.renew, list(owned), True)
            lost = set(owned).difference(kept)
        elif lost_keys:
            gone = set(lost_keys)
            lost = {t for t in owned if t.lower() in gone}
        else:
            lost = set()
        self._asked(asked, running=False)
        return lost

    async def release(self, targets: Sequence[str]) -> None:
        """Give up leases this engine holds."""
        await self._call(self.leases.release, list(targets))

    async def leave(self, owned: Sequence[str]) -> None:
        """Release every lease and leave the engine set (a graceful stop)."""
        try:
            await self._call(self.leases.release, list(owned))
            await self._call(self.leases.unregister)
            if owned:  # the others take them now, not at their next sweep
                await self._call(copy_leases.announce, self.client, self.prefix)
        except redis.RedisError as exc:
            log.warning("engine %s could not release leases: %s", self.name, exc)

    async def rebalance(self, active: Mapping[str, int], owned: Mapping[str, OwnedTarget],
                        drop: Callable[[str], None], limit: int | None = None,
                        urgent: Callable[[str], bool] | None = None) -> list[str]:
        """Release what this engine should not run, claim its share; the targets to start.

        ``owned`` is the engine's live map of running targets; ``drop`` stops one of them
        (called before its lease is released, so no other engine runs it meanwhile).
        ``limit`` caps the targets claimed now (those an operator handed over aside): an
        engine starting first would otherwise claim every target, start them all, and
        hand most back a sweep later, when the others have come up. Targets ``urgent``
        says yes to (they traded lately: a dead engine's may have fills to catch up) are
        claimed and started first, in a step of their own.
        """
        engines = await self.live_engines()
        self.engines = max(1, len(engines))
        share = math.ceil(len(active) / max(1, len(engines))) if active else 0
        await self._release([t for t in owned if t not in active], drop)
        moved = await self._call(self.leases.moved_from, list(active))
        if len(engines) > 1 and len(owned) > share:
            # Hand surplus targets to the others (they claim them on their next sweep).
            surplus = sorted((t for t in owned if t not in moved),
                             key=lambda t: len(owned[t].configs))
            await self._release(surplus[: len(owned) - share], drop)
        free = [t for t in active if t not in owned and moved.get(t) != self.name]
        room = share - len(owned) if len(engines) > 1 else len(free)
        if limit is not None:
            room = min(room, limit)
        handed = [t for t in free if t in moved]
        start: list[str] = []
        if free and (room > 0 or handed):
            holders = await self._call(self.leases.holders, free)
            # An operator handed these leases to this engine, with what the old holder had
            # left of them: renewed (and the lease clock noted) before they run.
            ours = [t for t in handed if holders[t] == self.name]
            if ours:
                asked = time.monotonic()
                kept = await self._call(self.leases.renew, ours)
                if kept:
                    self._asked(asked, running=bool(owned))
                start += [t for t in ours if t in kept]
            unheld = [t for t in free if holders[t] is None]
            # The urgent alone in a step of their own: starting with hundreds of others
            # they would be ready only when the whole step is (seconds, at scale).
            first = [t for t in unheld if urgent(t)] if urgent is not None else []
            unheld = first or unheld
            candidates = ([t for t in unheld if t in moved]
                          + [t for t in unheld if t not in moved][:max(room, 0)])
            if candidates:
                asked = time.monotonic()
                taken = await self._call(self.leases.claim, candidates)
                if taken:
                    self._asked(asked, running=bool(owned))
                self.claimed.update(taken)
                start += list(taken)
        return start

    async def _release(self, targets: list[str], drop: Callable[[str], None]) -> None:
        # Each is stopped before the leases go (in one call: a whole surplus at once).
        if not targets:
            return
        for target in targets:
            drop(target)
        await self.release(targets)
        log.info("engine %s released %d targets (%s...)", self.name, len(targets),
                 ", ".join(targets[:3]))


class SendLease:
    """What the fill executor asks of the leases: the fencing token a target's intents are
    written under, and whether sending is still safe. Unfenced (no token, always) until
    the engine holding ``ownership`` runs (``running``): an executor outside a running
    engine (a job, a test driving one step) writes and sends as no lease's holder."""

    def __init__(self, ownership: TargetOwnership | None = None) -> None:
        self.ownership = ownership
        self.running = False

    def token(self, target: str) -> int | None:
        """The fencing token of ``target`` (None: unfenced)."""
        if self.ownership is None or not self.running:
            return None
        return self.ownership.token(target)

    def may_send(self) -> bool:
        """False once the running engine's lease clock ran out."""
        return self.ownership is None or not self.running or self.ownership.may_send()


__all__ = ["SendLease", "TargetOwnership"]
