"""``TargetWatcher``: one owned target wallet's fills, detected once and handled in order.

Fills come in from the global RTDS feed and the chain (the engine fans them in with
``offer``: source ``feed``, ``chain`` for an exchange's ``OrderFilled`` log, ``pending``
for a match call not yet in a block) and from Data API ``/activity`` polling since the
persisted cursor minus an overlap window; all are de-duplicated on the fill's identity (tx
hash, asset, side, wallet), so a fill is handled once, when its first source saw it. A
pending match is copied at once only by the configs that opted in
(``copy_pending_matches``: it may still fail); the others copy it when a confirmed source
(chain, feed or poll) sees it. The watcher's executor task hands its fills and TP/SL
checks to the ``FillExecutor`` one at a time.
With the feed up, polling only backfills: a poll waits (a while at most) for copies in
flight, whose latency its request would add to.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol
from uuid import UUID

import trio

from services.copying import fences
from services.platform import metrics
from venue.client import AsyncVenueClient
from venue.errors import VenueError
from venue.models import ActivityItem
from worker.copy_engine import store
from worker.copy_engine.detection import PENDING, Detection
from worker.copy_engine.fill_executor import FillExecutor
from worker.copy_engine.settings import EngineSettings, EngineStats
from worker.copy_engine.store import ConfigSnapshot

log = logging.getLogger("copytrade.copy_engine")


@dataclass(frozen=True)
class Detected:
    """A fill queued for the executor: when and by which source it was seen, and for which
    configs (None: all the target's)."""

    item: ActivityItem
    detection: Detection  # when (wall and monotonic clocks) and by which source
    configs: frozenset[UUID] | None = None


class PollPace(Protocol):
    """The engine's poll scheduler, as a watcher's poll loop follows it."""

    limiter: trio.CapacityLimiter  # polls in flight at once, whatever the targets

    def delay(self) -> float: ...  # seconds between a target's polls, as things stand

    def feed_up(self) -> bool: ...

    # Set when the feed stops carrying trades (down or stale): long backstop waits end.
    def feed_lost(self) -> trio.Event: ...

    # A turn for a new target's first poll (True: ahead of the others, a take-over's risk).
    async def first_poll(self, urgent: bool = False) -> None: ...

    def polled(self) -> None: ...  # counts a poll (the engine's polls per minute)


@dataclass(frozen=True)
class WatchContext:
    """What every target's watcher shares with its engine."""

    name: str  # the engine's
    settings: EngineSettings
    stats: EngineStats
    executor: FillExecutor
    db: Callable[..., Any]
    polls: PollPace
    venue: Callable[[], AsyncVenueClient | None]  # the engine's client (while it runs)
    # Told after each fill ("fill") or exit check ("exits") the executor handled: the
    # engine's exit schedule follows what the target's configs hold from there.
    handled: Callable[[TargetWatcher, str], None] = lambda watcher, kind: None


class TargetWatcher:
    """One owned target: its configs, dedup memory and cursor (owns its poll and executor)."""

    def __init__(self, address: str, context: WatchContext) -> None:
        self.address = address
        self.context = context
        self.configs: dict[UUID, ConfigSnapshot] = {}
        self.seen: dict[tuple[str, str, str, str], int] = {}
        # Fills seen pending on chain, not yet confirmed: timestamp, and the configs that
        # copied them then (the rest copy on confirmation).
        self.pending: dict[tuple[str, str, str, str], tuple[int, frozenset[UUID]]] = {}
        # Pending fills their mined transaction did not confirm: a copy still queued of one
        # is dropped (timestamp, pruned like ``pending``).
        self.refuted: dict[tuple[str, str, str, str], int] = {}
        self.cursor = 0
        self.processed_ts = 0
        self.saved_ts = 0
        self.scope = trio.CancelScope()
        # ("fill", Detected) or ("exits", the tokens to check or None for all), in order
        self.send: trio.MemorySendChannel[tuple[str, Any]]
        self.receive: trio.MemoryReceiveChannel[tuple[str, Any]]
        self.send, self.receive = trio.open_memory_channel(10000)
        self.ready = trio.Event()
        self.last_error: str | None = None
        self.resumed = False  # a cursor was saved before: the target ran somewhere earlier
        self.urgent = False  # its first poll goes ahead of the others' (set before ``run``)

    async def load_cursor(self) -> None:
        """Start from the persisted cursor (a new target: from now)."""
        cursor = await self.context.db(store.read_cursor, self.address)
        self.resumed = cursor is not None
        if cursor is None:
            cursor = int(time.time()) - 1
            await self.context.db(store.write_cursor, self.address, cursor)
        self.cursor = self.processed_ts = self.saved_ts = cursor

    async def run(self) -> None:
        """Poll and handle fills until cancelled (``ready`` is set as it starts)."""
        self.ready.set()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._poll_loop)
            nursery.start_soon(self._executor_loop)

    def offer(self, item: ActivityItem, source: str) -> bool:
        """Queue a target fill for the executor unless already seen; True when queued."""
        if not item.is_trade:
            return False
        key = item.dedup_key
        stats = self.context.stats
        if self.has_seen(key, source):
            return False
        detection = Detection.now(source)
        first = source
        if source == PENDING:
            configs = frozenset(cid for cid, c in self.configs.items()
                                if c.rules.copy_pending_matches)
        elif key in self.pending:  # confirmed now: the configs that waited copy it
            first = PENDING
            acted = self.pending[key][1]
            configs = frozenset(cid for cid in self.configs if cid not in acted)
        else:
            configs = None
        if configs is None or configs:
            try:
                self.send.send_nowait(("fill", Detected(item, detection, configs)))
            except trio.WouldBlock:
                return False  # the poller (or the block) finds it again
        if source == PENDING:
            self.pending[key] = (item.timestamp, configs or frozenset())
        else:
            self.pending.pop(key, None)
            self.seen[key] = item.timestamp
        stats.sighted(source, key[0])
        if first == source:  # the first sighting: what the source is credited with
            metrics.copy_detected(source)
            stats.detected(source, detection.at.timestamp() - item.timestamp)
        return True

    def has_seen(self, key: tuple[str, str, str, str], source: str) -> bool:
        """Whether a fill of this identity was handled already (counted as a duplicate, and
        as this source's sighting)."""
        if key in self.seen or (source == PENDING and key in self.pending):
            stats = self.context.stats
            stats.duplicates += 1
            stats.sighted(source, key[0])
            return True
        return False

    def refute(self, key: tuple[str, str, str, str]) -> None:
        """A fill seen pending was not mined as seen: its copies still queued are dropped;
        a confirmed sighting of the same identity later is a fill of its own."""
        seen = self.pending.pop(key, None)
        self.refuted[key] = seen[0] if seen is not None else self.cursor

    def request_exit_check(self, tokens: frozenset[str] | None = None) -> bool:
        """Queue an exit check behind the fills already queued (skipped when full): of the
        positions in ``tokens`` (their price moved or their clock came due), or None for
        all the target's periodic work (a start, a fill, a retry); whether it was queued."""
        try:
            self.send.send_nowait(("exits", tokens))
        except (trio.WouldBlock, trio.ClosedResourceError):
            return False
        return True

    async def _poll_loop(self) -> None:
        context = self.context
        # Targets starting together (an engine's start, a take-over) take turns for their
        # first poll at the deployment's poll rate, which spreads the later ones too; those
        # at risk of a gap's fills go first.
        await context.polls.first_poll(self.urgent)
        while True:
            try:
                await self.poll_once()
                self.last_error = None
            except VenueError as exc:
                self.last_error = f"polling the venue: {exc}"
                log.warning("engine %s: polling %s failed: %s", context.name, self.address,
                            exc)
            if self.processed_ts > self.saved_ts:
                try:
                    await context.db(store.write_cursor, self.address, self.processed_ts)
                    self.saved_ts = self.processed_ts
                except Exception:
                    log.exception("engine %s: saving the cursor of %s failed", context.name,
                                  self.address)
            self._prune_seen()
            with trio.move_on_after(context.polls.delay()):
                await context.polls.feed_lost().wait()  # the feed went: poll now, then fast
            if context.polls.feed_up():
                # A backstop poll is never urgent: it waits for copies in flight, whose
                # latency its request and parsing on this loop would add to (a while at
                # most, so a stream of fills cannot starve it).
                with trio.move_on_after(context.settings.backstop_hold_seconds):
                    await context.executor.quiet.wait()

    async def poll_once(self) -> int:
        """Read the target's fills since its cursor minus the overlap; how many were new."""
        context = self.context
        venue = context.venue()
        assert venue is not None
        start = max(0, self.cursor - context.settings.overlap_seconds)
        new = 0
        # Data API v2 cursor pages (v1 offsets, capped at 10,000 rows, only as a fallback):
        # a long catch-up is not cut short (ACCOUNTS.md §11).
        async with context.polls.limiter:
            rows = await venue.activity_history(self.address, types="TRADE", start=start)
        context.stats.poll_requests += 1
        context.polls.polled()
        for item in sorted(rows, key=lambda row: row.timestamp):  # oldest first, as they came
            if self.offer(item, "poll"):
                new += 1
            self.cursor = max(self.cursor, item.timestamp)
        context.stats.polls += 1
        return new

    def _prune_seen(self) -> None:
        horizon = self.cursor - self.context.settings.overlap_seconds - 60
        if len(self.seen) > 1000:
            self.seen = {k: v for k, v in self.seen.items() if v >= horizon}
        # A pending match never confirmed (dropped or reverted) is forgotten in time.
        self.pending = {k: v for k, v in self.pending.items()
                        if v[0] >= horizon - self.context.settings.max_fill_age_seconds}
        self.refuted = {k: v for k, v in self.refuted.items()
                        if v >= horizon - self.context.settings.max_fill_age_seconds}

    async def _executor_loop(self) -> None:
        context = self.context
        executor = context.executor
        async for kind, queued in self.receive:
            detected = queued if kind == "fill" else None
            item = detected.item if detected is not None else None
            try:
                if detected is not None and item is not None:
                    if detected.detection.source == PENDING and item.dedup_key in self.refuted:
                        continue  # not mined as seen before its copy was made: none is
                    configs = self.configs if detected.configs is None else {
                        cid: c for cid, c in self.configs.items() if cid in detected.configs}
                    await executor.handle_fill(self.address, configs, item, detected.detection)
                    if detected.detection.source != PENDING:  # the cursor moves on confirmed fills
                        self.processed_ts = max(self.processed_ts, item.timestamp)
                else:
                    await executor.check_exits(self.configs, queued)
                context.handled(self, kind)
            except fences.LeaseLapsed:
                # Nothing recorded: the target stops here, and its next owner copies the fill
                # from the cursor (which stays before it).
                log.warning("engine %s: lease clock ran out; %s of %s left to the next owner",
                            context.name, kind, self.address)
                if kind == "fill":
                    self.seen.pop(item.dedup_key, None)
            except Exception as exc:
                log.exception("engine %s: handling %s of %s failed", context.name, kind,
                              self.address)
                self.last_error = f"{type(exc).__name__}: {exc}"
                try:
                    await context.db(store.record_error, list(self.configs), self.last_error)
                except Exception:
                    log.exception("could not record the error")
                if kind == "fill" and item is not None:
                    self.seen.pop(item.dedup_key, None)  # let the poller retry it


__all__ = ["Detected", "TargetWatcher", "WatchContext"]
