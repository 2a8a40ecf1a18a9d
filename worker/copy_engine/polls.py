"""``PollScheduler``: when the engine's targets poll the Data API, and when open intents are
looked up again.

Each target polls every second while polls are the source, else at the backstop interval,
stretched so that the deployment's targets together stay under the venue's poll rate; new
targets take turns for their first poll (urgent ones, which a take-over may have left
fills to, first). Its own task, started in the engine's nursery, is the recheck loop
(``reconciler.recheck``): open live intents are looked up again until the venue's answer
settles them (an order it did not know yet, a lost answer, a hand-over that never finished).
"""

from __future__ import annotations

import heapq
import itertools
import logging
from collections.abc import Callable, Sized
from typing import Any
from uuid import UUID

import trio

from worker.copy_engine import reconciler
from worker.copy_engine.detection import POLL, DetectionSource
from worker.copy_engine.fan_in import DetectionFanIn
from worker.copy_engine.fill_executor import FillExecutor
from worker.copy_engine.ownership import TargetOwnership
from worker.copy_engine.settings import EngineSettings
from worker.copy_engine.store import ConfigSnapshot
from worker.copy_engine.watcher import TargetWatcher

log = logging.getLogger("copytrade.copy_engine")


class PollScheduler:
    """The pace of the targets' polls and of the open intents' rechecks (owns both)."""

    def __init__(self, name: str, settings: EngineSettings, detection: DetectionSource,
                 fan_in: DetectionFanIn, ownership: TargetOwnership,
                 targets: Callable[[], Sized], executor: FillExecutor,
                 configs: Callable[[], dict[UUID, ConfigSnapshot]],
                 db: Callable[..., Any]) -> None:
        self.name = name
        self.settings = settings
        self.detection = detection
        self.fan_in = fan_in
        self.ownership = ownership
        self._targets = targets
        self._executor = executor
        self._configs = configs
        self._db = db
        # Backstop polls of many targets share the connection pool with the hot path.
        self.limiter = trio.CapacityLimiter(settings.poll_concurrency)
        self._next_first_poll = 0.0
        self._turns: list[tuple[int, int]] = []  # first polls waiting: (urgency, order)
        self._turn_numbers = itertools.count()
        self._turn_taken = trio.Event()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Recheck open intents every ``recheck_seconds`` until cancelled."""
        task_status.started()
        # Intents whose order the venue did not know yet (or whose answer was lost) are
        # settled here once it does, rather than at the next restart or take-over.
        while True:
            await trio.sleep(self.settings.recheck_seconds)
            try:
                await reconciler.recheck(
                    self.name, self._configs, db=self._db,
                    live_engines=self.ownership.live_engines, placer=self._executor,
                    older_than=self.settings.recheck_after_seconds,
                    stale_after=self.settings.stale_intent_seconds)
            except Exception:  # retried at the next turn
                log.exception("engine %s: rechecking open intents failed", self.name)

    def feed_up(self) -> bool:
        """A faster source than polls detects (the feed, or the chain's logs)."""
        return self.detection.source != POLL

    def feed_lost(self) -> trio.Event:
        """Set when the feed stops carrying trades: long backstop waits end."""
        return self.fan_in.lost

    def polled(self) -> None:
        """Count a poll (the engine's polls per minute)."""
        self.detection.polled()

    def delay(self) -> float:
        """Seconds between one target's polls: every second while polls are the source, else
        (the feed, or with it degraded the chain's logs, detect) the backstop interval,
        stretched so that all the deployment's targets together stay under the poll rate
        (each engine polls its share of the targets, so it takes its share of the rate: the
        venue's limit is the deployment's, not one worker's)."""
        settings = self.settings
        if self.feed_up():
            every, rate = settings.backstop_poll_seconds, settings.backstop_polls_per_second
        else:
            every, rate = settings.poll_seconds, settings.polls_per_second
        return max(every, len(self._targets()) * self.ownership.engines / rate)

    async def first_poll(self, urgent: bool = False) -> None:
        """Wait for a new target's turn to poll first: turns come at this engine's share of
        the deployment's feed-down poll rate, so targets starting together (thousands at
        an engine's start or a take-over) do not send their first polls all at once.
        ``urgent`` turns (targets a take-over may have left fills to) go first."""
        entry = (0 if urgent else 1, next(self._turn_numbers))
        heapq.heappush(self._turns, entry)
        try:
            while True:
                now = trio.current_time()
                if self._turns[0] != entry:
                    await self._turn_taken.wait()  # the head moved: look again
                elif now < self._next_first_poll:
                    await trio.sleep_until(self._next_first_poll)
                else:
                    heapq.heappop(self._turns)
                    self._next_first_poll = now + (self.ownership.engines
                                                   / self.settings.polls_per_second)
                    return
        finally:
            if entry in self._turns:  # cancelled while waiting
                self._turns.remove(entry)
                heapq.heapify(self._turns)
            self._turn_taken.set()
            self._turn_taken = trio.Event()

    def catch_up(self, watcher: TargetWatcher) -> None:
        """Queue the fills the feed carried for a resumed target since its cursor (a
        take-over's gap, found without a request) and mark its first poll urgent when it
        had some, or when the feed's history may not reach back to its cursor."""
        if not watcher.resumed:
            return  # a new target: nothing of it was missed
        since = watcher.cursor - self.settings.overlap_seconds
        feed = self.fan_in.feed
        live = feed is not None and self.fan_in.connected
        found = 0
        if live:
            for item in feed.recent(watcher.address):
                if item.timestamp >= since and watcher.offer(item, "feed"):
                    found += 1
        watcher.urgent = bool(found) or not (live and feed.covers(since))
        if found:
            log.info("engine %s: %d fills of %s since its cursor, from the feed's history",
                     self.name, found, watcher.address)


__all__ = ["PollScheduler"]
