"""After a restart or a take-over: account for every copy intent whose order may be in flight.

For each open intent of a target's configs (written by this engine before, or by one that
is no longer alive), ``services.copying.intents.reconcile`` applies the rules: an intent with
no order record never left and comes back to be placed now (or is failed as ``not_sent``
when too old); one with an order record takes the outcome the venue gives for its hash.
Intents of an engine still alive (a hand-over in progress) are left to it. Nothing is ever
sent twice: a re-placed intent had no order, and a take-over only one engine wins.

While it runs, an engine also looks again at open live intents (``recheck``): an order
the venue did not know yet when it was looked up (within the order service's grace
period) or whose answer was lost is settled once the venue knows it, or failed once the
grace has passed. Its own intents by name, wherever their target runs now (an intent this
engine sent is its to settle even after an operator moved the target: the new owner
leaves it alone while this engine lives), and those of the configs it runs whose engine
has died since the target started here (a hand-over that never finished).

The reconciler needs no engine: the target's configs, a database runner, the live
engines and something that places an intent (``IntentPlacer``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol
from uuid import UUID

from services.copying import intents as copy_intents
from services.copying.intents import CopyIntentDraft
from worker.copy_engine.store import ConfigSnapshot

log = logging.getLogger("copytrade.copy_engine")


class IntentPlacer(Protocol):
    """Places one stored intent's order for its config."""

    async def place_intent(self, config: ConfigSnapshot, draft: CopyIntentDraft) -> None: ...


async def reconcile_target(worker: str, configs: Mapping[UUID, ConfigSnapshot], *,
                           db: Callable[..., Awaitable[Any]],
                           live_engines: Callable[[], Awaitable[list[str]]],
                           placer: IntentPlacer, stale_after: float) -> int:
    """Reconcile the open intents of a target's configs; how many orders were placed now."""
    if not configs:
        return 0
    intents = await db(copy_intents.open_intents, list(configs))
    if not intents:
        return 0
    alive = set(await live_engines())
    placed = 0
    for intent in intents:
        if intent.worker != worker and intent.worker in alive:
            continue  # its engine still runs (a hand-over in progress) and settles it
        try:
            draft = await db(copy_intents.reconcile, intent.id, worker, stale_after)
        except Exception:
            log.exception("engine %s: reconciling intent %s failed", worker, intent.id)
            continue
        config = configs.get(intent.config_id)
        if draft is not None and config is not None:
            log.warning("engine %s: intent %s was never sent; placing it now", worker,
                        intent.id)
            await placer.place_intent(config, draft)
            placed += 1
    return placed


async def recheck(worker: str, configs: Callable[[], Mapping[UUID, ConfigSnapshot]], *,
                  db: Callable[..., Awaitable[Any]],
                  live_engines: Callable[[], Awaitable[list[str]]], placer: IntentPlacer,
                  older_than: float, stale_after: float) -> int:
    """Look again at open live intents older than ``older_than`` s; how many were looked at.

    This engine's own intents (wherever their target runs now), and those of the configs
    it runs (``configs()``) whose engine is gone: taken over as at a target's start.
    """
    rows = await db(copy_intents.unsettled, older_than)
    if not rows:
        return 0
    running = configs()
    orphans = [r for r in rows if r[2] != worker and r[1] in running]
    alive = set(await live_engines()) if orphans else set()
    looked = 0
    for intent_id, config_id, owner in rows:
        mine = owner == worker
        if not mine and (config_id not in running or owner in alive):
            continue  # another engine's, and it still runs (or not a config run here)
        looked += 1
        try:
            draft = await db(copy_intents.reconcile, intent_id, worker, stale_after)
        except Exception:
            log.exception("engine %s: rechecking intent %s failed", worker, intent_id)
            continue
        # A draft back means no order record: never sent. A dead engine's is placed now,
        # as at a take-over; this engine's own is failed once stale (it was not lost).
        if draft is not None and not mine:
            log.warning("engine %s: intent %s was never sent; placing it now", worker,
                        intent_id)
            await placer.place_intent(running[config_id], draft)
    return looked


__all__ = ["IntentPlacer", "recheck", "reconcile_target"]
