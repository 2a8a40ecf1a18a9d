"""``TargetOwnership``: which targets this engine runs, by lease, in a fair share of them.

Every sweep, targets with no active configs are released; with several live engines,
an engine keeps at most its fair share (active targets / live engines, rounded up) and
hands the surplus back; free targets are claimed up to that share. A target an operator
moved (``copytrade executors move``) never goes back to the engine it left, is taken by
another at once (above its share) and is not shed while the mark lasts. Leases are
renewed every heartbeat; one that could not be renewed was taken over.
"""

from __future__ import annotations

import logging
import math
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
                 call: RedisCall) -> None:
        self.name = name
        self.prefix = prefix
        self.client = client
        self.leases = TargetLeases(client, prefix, name, lease_ms)
        self._call = call
        # Live engines at the last rebalance: the deployment's venue budgets are shared.
        self.engines = 1

    async def live_engines(self) -> list[str]:
        """Engines heartbeating now (this one included once it has)."""
        return await self._call(self.leases.live_engines)

    async def heartbeat(self, fields: dict[str, str]) -> None:
        """Announce this engine alive for one lease period."""
        await self._call(self.leases.heartbeat, fields)

    async def renew(self, owned: Sequence[str]) -> set[str]:
        """Extend the leases of ``owned``; the targets still held (the rest were lost)."""
        return await self._call(self.leases.renew, list(owned))

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
                        drop: Callable[[str], None], limit: int | None = None) -> list[str]:
        """Release what this engine should not run, claim its share; the targets to start.

        ``owned`` is the engine's live map of running targets; ``drop`` stops one of them
        (called before its lease is released, so no other engine runs it meanwhile).
        ``limit`` caps the targets claimed now (those an operator handed over aside): an
        engine starting first would otherwise claim every target, start them all, and
        hand most back a sweep later, when the others have come up.
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
            # An operator handed these leases to this engine.
            start += [t for t in handed if holders[t] == self.name]
            unheld = [t for t in free if holders[t] is None]
            candidates = ([t for t in unheld if t in moved]
                          + [t for t in unheld if t not in moved][:max(room, 0)])
            start += await self._call(self.leases.claim, candidates)
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


__all__ = ["TargetOwnership"]
