"""``CopyEngine``: the long-lived Trio task that owns target leases and mirrors their fills.

The engine owns the nursery and a few parts, each owning the tasks it starts:

- ``TargetOwnership`` (``ownership.py``): the target leases, their fencing tokens and
  this engine's fair share. The engine's heartbeat renews the leases every second (a
  target whose lease could not be renewed was taken over and stops at once); the lease
  clock stops every target when no renewal came back for the lease time less a margin
  (Redis out of reach), before any lease can expire; its sweep, every second or when nudged by a
  control job or pub/sub message, reads the configs written since its last look (their
  revision), lets the ownership release and claim targets, and reloads configs whose
  version changed, so edits apply without a restart.
- ``TargetWatcher`` (``watcher.py``), one per owned target: polling, de-duplication and
  cursor, and the task that hands the target's fills to the executor one at a time. The
  engine fans the global RTDS activity feed (one connection, filtered locally) in to them.
- ``ChainSource`` (``chain_source.py``), when on-chain detection is on: the exchanges'
  ``OrderFilled`` logs of the owned targets (and pending match calls), fanned in to their
  watchers as a third source beside the feed and polling; with it off but a chain RPC
  configured, it stands by and reads the logs only while the feed is degraded (stale,
  down or refused), before Data API polls are the source.
- ``QuoteSource`` (``quotes.py``): markets, and books from the CLOB market channel.
- ``FillExecutor`` (``fill_executor.py``): decisions, copy execution, TP/SL exits.
- ``ExitSchedule`` (``exits.py``): which targets have exit work and when (held tokens'
  book moves on the market channel, exit-before-end timers), so no pass visits every
  config.
- ``CopierWallets`` (``copier_wallets.py``): the copiers' opened accounts and estimates,
  read once per deployment and shared through Redis (``shared_balances.py``).
- a recheck loop (``reconciler.recheck``): open live intents (this engine's, and those of
  its configs whose engine died) are looked up again until the venue's answer settles
  them (an order it did not know yet, a lost answer, a hand-over that never finished).

A fill becomes one intent per config (copied or skipped, with the reason); the live copies
are recorded with their orders in one transaction and sent concurrently
(``services.copying.execution``). No target trade is ever mirrored twice, and no order leaves
before its record.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import json
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import redis
import trio

from chain.exchange_events import ExchangeFill
from models import database
from models.base import db as bound_database
from services.copying import copy_notices, fences, pending_matches
from services.platform import copy_control, metrics, venues
from services.platform.runtime import runtime
from venue.client import AsyncVenueClient
from venue.errors import VenueError
from worker.copy_engine import reconciler, store
from worker.copy_engine.chain_source import ChainSource, activity_item
from worker.copy_engine.copier_wallets import CopierWallets
from worker.copy_engine.detection import POLL, DetectionSource
from worker.copy_engine.exits import ExitSchedule
from worker.copy_engine.fill_executor import FillExecutor
from worker.copy_engine.ownership import TargetOwnership
from worker.copy_engine.quotes import QuoteSource
from worker.copy_engine.settings import EngineSettings, EngineStats
from worker.copy_engine.shared_balances import SharedBalances
from worker.copy_engine.store import ConfigSnapshot
from worker.copy_engine.watcher import TargetWatcher, WatchContext

log = logging.getLogger("copytrade.copy_engine")

# How far back a sweep reads config revisions (see ``CopyEngine._since``).
REVISION_LAG_SECONDS = 2.0


class CopyEngine:
    """Owns target leases and mirrors their fills to every config copying them."""

    def __init__(self, name: str, redis_client: redis.Redis, prefix: str,
                 settings: EngineSettings | None = None,
                 venue_factory: Callable[[], AsyncVenueClient] | None = None) -> None:
        self.name = name
        self.settings = settings or EngineSettings()
        self.prefix = prefix
        self.redis = redis_client
        self.stats = EngineStats()
        self.venue_factory = venue_factory or venues.async_client
        self._venue: AsyncVenueClient | None = None
        self.targets: dict[str, TargetWatcher] = {}
        self.feed: Any = None
        self.feed_connected = False  # connected and carrying trades (not stale)
        self.chain: ChainSource | None = None  # on-chain detection, when on
        self.detection = DetectionSource(name)
        self._feed_lost = trio.Event()  # set (and replaced) each time the feed stops
        self._wake = trio.Event()
        self._nursery: trio.Nursery | None = None
        self._db_limiter = trio.CapacityLimiter(self.settings.db_threads)
        # Backstop polls of many targets share the connection pool with the hot path.
        self._poll_limiter = trio.CapacityLimiter(self.settings.poll_concurrency)
        self.ownership = TargetOwnership(redis_client, prefix, name, self.settings.lease_ms,
                                         self.redis_call, self.settings.lease_margin)
        self.quotes = QuoteSource(self.settings, self.stats)
        # Copiers' balance reads have their own slots: they never starve detection polls.
        self._balance_limiter = trio.CapacityLimiter(self.settings.balance_concurrency)
        self.wallets = CopierWallets(name, self.settings, self.db, self._balance_limiter,
                                     self._account_users, lambda: self.ownership.engines,
                                     SharedBalances(redis_client, prefix, name, self.redis_call))
        self.executor = FillExecutor(name, self.settings, self.stats, self.quotes,
                                     self.wallets, self.db)
        self.exits = ExitSchedule(self.settings, self._request_exits, self._market_end,
                                  self.quotes.live, self.executor.opening_due)
        self.quotes.moved = self.exits.moved
        self._watch = WatchContext(
            name=name, settings=self.settings, stats=self.stats, executor=self.executor,
            db=self.db, poll_limiter=self._poll_limiter, venue=lambda: self._venue,
            poll_delay=self.poll_delay, feed_up=lambda: self.detection.source != POLL,
            feed_lost=lambda: self._feed_lost, first_poll=self.first_poll,
            polled=self.detection.polled, handled=self._handled)
        self._next_first_poll = 0.0
        self._turns: list[tuple[int, int]] = []  # first polls waiting: (urgency, order)
        self._turn_numbers = itertools.count()
        self._turn_taken = trio.Event()
        self._active: dict[str, int] = {}  # active targets (and config counts) as last read
        # Config revisions already read: (monotonic time, highest revision) per sweep; a
        # sweep reads from the newest mark at least REVISION_LAG_SECONDS old (see sweep).
        self._marks: list[tuple[float, int]] = []
        self._full_sweep = True
        self._full_sweep_at = 0.0
        self._dropped = False  # targets were dropped since the accounts were last retained
        self._users: set[UUID] | None = None  # users of the live configs running here
        self.running = False
        self._started_at = 0.0  # trio time the engine started (the feed's first grace)
        self._feed_on = False  # an RTDS feed runs (False: detection never has a feed)
        self._notice_at: float | None = None  # when the feed's drop is told (trio time)

    # -- plumbing ---------------------------------------------------------------------

    @property
    def venue(self) -> AsyncVenueClient | None:
        """The engine's async venue client (made when it runs)."""
        return self._venue

    @venue.setter
    def venue(self, client: AsyncVenueClient | None) -> None:
        self._venue = self.quotes.venue = self.wallets.venue = self.executor.venue = client

    async def db(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run blocking database work in a thread with its own connection."""
        def call() -> Any:
            with bound_database.connection_context():
                return function(*args, **kwargs)
        return await trio.to_thread.run_sync(call, limiter=self._db_limiter)

    async def redis_call(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run a blocking Redis call in a thread."""
        return await trio.to_thread.run_sync(function, *args)

    def poll_delay(self) -> float:
        """Seconds between one target's polls: every second while polls are the source, else
        (the feed, or with it degraded the chain's logs, detect) the backstop interval,
        stretched so that all the deployment's targets together stay under the poll rate
        (each engine polls its share of the targets, so it takes its share of the rate: the
        venue's limit is the deployment's, not one worker's)."""
        settings = self.settings
        if self.detection.source != POLL:
            every, rate = settings.backstop_poll_seconds, settings.backstop_polls_per_second
        else:
            every, rate = settings.poll_seconds, settings.polls_per_second
        return max(every, len(self.targets) * self.ownership.engines / rate)

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

    def _catch_up(self, watcher: TargetWatcher) -> None:
        """Queue the fills the feed carried for a resumed target since its cursor (a
        take-over's gap, found without a request) and mark its first poll urgent when it
        had some, or when the feed's history may not reach back to its cursor."""
        if not watcher.resumed:
            return  # a new target: nothing of it was missed
        since = watcher.cursor - self.settings.overlap_seconds
        feed = self.feed
        found = 0
        if feed is not None and self.feed_connected:
            for item in feed.recent(watcher.address):
                if item.timestamp >= since and watcher.offer(item, "feed"):
                    found += 1
        watcher.urgent = bool(found) or not (
            feed is not None and self.feed_connected and feed.covers(since))
        if found:
            log.info("engine %s: %d fills of %s since its cursor, from the feed's history",
                     self.name, found, watcher.address)

    def _traded_lately(self, target: str) -> bool:
        """The feed carried a trade of ``target`` lately: a take-over claims it first, so
        that a dead engine's gap is copied in the first steps, not the last."""
        return self.feed is not None and self.feed.traded(target)

    def wake(self) -> None:
        """Sweep now (a control job or message said a config changed)."""
        self._wake.set()

    def owned_configs(self) -> list[UUID]:
        """Ids of the configs this engine runs."""
        return [c for watcher in self.targets.values() for c in watcher.configs]

    def watcher_for(self, target: str) -> TargetWatcher:
        """A watcher of ``target`` bound to this engine (not started)."""
        return TargetWatcher(target, self._watch)

    def _running_configs(self) -> dict[UUID, ConfigSnapshot]:
        return {cid: snap for watcher in self.targets.values()
                for cid, snap in watcher.configs.items()}

    def _account_users(self) -> set[UUID]:
        # Walking every config costs milliseconds at 25,000 of them, and the wallets ask
        # every few seconds: kept until the running configs change.
        if self._users is None:
            self._users = {c.user_id for watcher in self.targets.values()
                           for c in watcher.configs.values() if not c.paper}
        return self._users

    # -- run ----------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[CopyEngine] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Run until cancelled; leases are released on the way out."""
        self.venue = venue = self.venue_factory()
        # Every poll is a request: httpx's per-request INFO lines would drown the worker log.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        try:
            await self.ownership.heartbeat(self._heartbeat_fields())
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                self.executor.spawn = nursery.start_soon
                self.executor.fence_of = self.ownership.token
                self.executor.may_send = self.ownership.may_send
                self.running = True
                nursery.start_soon(self._heartbeat_loop)
                nursery.start_soon(self._lease_clock_loop)
                nursery.start_soon(self._sweep_loop)
                nursery.start_soon(self._control_loop)
                self._started_at = trio.current_time()
                self._feed_on = bool(self.settings.use_feed and venue.config.rtds_url)
                if self._feed_on:
                    nursery.start_soon(self._feed_loop)
                self.chain = self.detection.chain = self._chain_source()
                if self.chain is not None:
                    nursery.start_soon(self._chain_loop if self.chain.active
                                       else self._chain_fallback_loop, self.chain)
                nursery.start_soon(self._detection_loop)
                if self.settings.use_book_feed and venue.config.market_ws_url:
                    nursery.start_soon(self.quotes.run)
                nursery.start_soon(self.exits.run)
                nursery.start_soon(self.wallets.run)
                nursery.start_soon(self._recheck_loop)
                if database.has_log_to_fold():
                    nursery.start_soon(self._fold_log_loop)
                task_status.started(self)
        finally:
            self.running = False
            self.wallets.clear()  # opened keys live no longer than the engine
            with trio.CancelScope(shield=True):
                owned = list(self.targets)
                for watcher in self.targets.values():
                    watcher.scope.cancel()
                await self.ownership.leave(owned)
                await venue.aclose()
            log.info("copy engine %s stopped (released %d targets)", self.name, len(owned))

    def _heartbeat_fields(self) -> dict[str, str]:
        configs = sum(len(watcher.configs) for watcher in self.targets.values())
        metrics.copy_executors(len(self.targets), configs)
        return {"heartbeat_at": datetime.now(UTC).isoformat(),
                "targets": str(len(self.targets)), "configs": str(configs),
                "feed": "up" if self.feed_connected else "down", **self.detection.fields(),
                "throttled": json.dumps(self._throttled(), sort_keys=True),
                "rate_tiers": json.dumps(self._rate_tiers(), sort_keys=True)}

    def _rate_tiers(self) -> dict[str, str]:
        """Each signer's rate-limit tier as the venue last named it (for status)."""
        budgets = self._venue.transport.budgets if self._venue is not None else None
        return budgets.tiers() if budgets is not None else {}

    def _throttled(self) -> dict[str, dict[str, float]]:
        """Signers whose venue budget backed off after a rate-limit warning (for status);
        the lowest budget of each kind goes to the metrics beside it."""
        budgets = self._venue.transport.budgets if self._venue is not None else None
        if budgets is None:
            return {}
        metrics.venue_signer_limits(budgets.lowest())  # the metrics follow the recovery
        return budgets.throttled()

    async def _heartbeat_loop(self) -> None:
        while True:
            await trio.sleep(self.settings.heartbeat_seconds)
            owned = list(self.targets)
            try:
                kept = await self.ownership.renew(owned)
                await self.ownership.heartbeat(self._heartbeat_fields())
            except redis.RedisError as exc:
                log.error("engine %s: lease renewal failed: %s", self.name, exc)
                continue
            for target in owned:
                if target not in kept and target in self.targets:
                    log.warning("engine %s lost the lease on %s; stopping it", self.name, target)
                    self._drop_target(target)
            # Stopped by the lease clock while this renewal was on its way: let them go (a
            # claim takes them again, with a new fencing token).
            await self.ownership.release([t for t in kept if t not in self.targets])
            self._retain_accounts()

    async def _lease_clock_loop(self) -> None:
        """Stop every target once the lease clock runs out (no renewal for the lease time
        less the margin), without waiting for Redis or the database: another engine may
        claim them as soon as the leases expire."""
        while True:
            await trio.sleep(min(0.1, self.settings.heartbeat_seconds / 4))
            if self.targets and not self.ownership.may_send():
                log.error("engine %s: no lease renewal for %.1f s; stopping its %d targets",
                          self.name, self.ownership.safe_seconds, len(self.targets))
                for target in list(self.targets):
                    self._drop_target(target)

    def _request_exits(self, target: str, tokens: frozenset[str] | None) -> None:
        """The exit schedule's check of a target (queued behind its fills)."""
        watcher = self.targets.get(target)
        if watcher is not None:
            watcher.request_exit_check(tokens)

    async def _market_end(self, token: str) -> int | None:
        """The end (unix seconds) of the token's market, if it has one (Gamma, cached)."""
        assert self.venue is not None
        market = await self.venue.gamma.market_by_token(token)
        return int(market.end_date.timestamp()) if market.end_date else None

    def _handled(self, watcher: TargetWatcher, kind: str) -> None:
        # A fill may have opened or closed positions, and moved a loss stop's realised PnL.
        if self.targets.get(watcher.address) is watcher:
            self.exits.update(watcher.address, watcher.configs, everything=kind == "fill" and any(
                c.rules.needs_stop_check for c in watcher.configs.values()))

    async def _recheck_loop(self) -> None:
        # Intents whose order the venue did not know yet (or whose answer was lost) are
        # settled here once it does, rather than at the next restart or take-over.
        while True:
            await trio.sleep(self.settings.recheck_seconds)
            try:
                await reconciler.recheck(
                    self.name, self._running_configs, db=self.db,
                    live_engines=self.ownership.live_engines, placer=self.executor,
                    older_than=self.settings.recheck_after_seconds,
                    stale_after=self.settings.stale_intent_seconds)
            except Exception:  # retried at the next turn
                log.exception("engine %s: rechecking open intents failed", self.name)

    async def _fold_log_loop(self) -> None:
        # The worker's connections leave SQLite's log to this loop (``fold_on_commit``):
        # a fold every few seconds costs one fill a little; one inside a commit, every ~10
        # fills, cost that fill an fsync.
        while True:
            await trio.sleep(self.settings.fold_log_seconds)
            try:
                await self.db(database.fold_log)
            except Exception:  # retried at the next turn
                log.exception("engine %s: folding the database log failed", self.name)

    async def _control_loop(self) -> None:
        """Wake the sweep on pub/sub messages about config changes."""
        def listen(pubsub: Any) -> bool:
            message = pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            return copy_control.decode_message(message) is not None

        pubsub = self.redis.pubsub()
        try:
            await self.redis_call(pubsub.subscribe, copy_control.channel(self.prefix))
            while True:
                try:
                    got = await trio.to_thread.run_sync(listen, pubsub, abandon_on_cancel=True)
                except redis.RedisError as exc:
                    log.warning("engine %s: control channel: %s", self.name, exc)
                    await trio.sleep(1)
                    continue
                if got:
                    self.wake()
        finally:
            with trio.CancelScope(shield=True), contextlib.suppress(redis.RedisError):
                await trio.to_thread.run_sync(pubsub.close)

    # -- sweep: which targets this engine runs ----------------------------------------

    async def _sweep_loop(self) -> None:
        while True:
            try:
                await self.sweep()
            except Exception:
                log.exception("engine %s: sweep failed", self.name)
            with trio.move_on_after(self.settings.sweep_seconds):
                await self._wake.wait()
            self._wake = trio.Event()

    async def sweep(self) -> None:
        """Claim, release and reload targets and configs from the database.

        A sweep reads only the configs written since its last look: every insert and update
        moves a config's revision (a trigger, from one counter), so the query is a range of
        the revision index, empty when nothing changed, and the active-config counts are
        re-read for the targets those configs copy. Every ``full_sweep_seconds`` (and at
        the start) everything is read again, a backstop for rows changed behind the
        trigger's back. Between sweeps the leases are checked against the targets read.
        """
        now = time.monotonic()
        full = (self._full_sweep or not self._marks
                or now - self._full_sweep_at >= self.settings.full_sweep_seconds)
        self._full_sweep = False
        changes: list[store.ConfigChange] = []
        if full:
            top = await self.db(store.latest_revision)  # before: later writes come next time
            active = await self.db(store.active_targets)
        else:
            changes = await self.db(store.config_changes, self._since(now))
            top = max([c.revision for c in changes], default=self._marks[-1][1])
            touched = sorted({c.target for c in changes})
            counts = await self.db(store.active_targets, touched) if touched else {}
            active = self._active
            for target in touched:
                if counts.get(target):
                    active[target] = counts[target]
                else:
                    active.pop(target, None)
        # Claims go at the pace targets start: at most claims_per_sweep starting at once.
        starting = sum(1 for watcher in self.targets.values() if not watcher.ready.is_set())
        for target in await self.ownership.rebalance(
                active, self.targets, self._drop_target,
                limit=max(0, self.settings.claims_per_sweep - starting),
                urgent=self._traded_lately):
            self._start_target(target)
        self._retain_accounts()
        if full:
            await self._reload_configs()
            self._active, self._marks = active, [(now, top)]
            self._full_sweep_at = now
        else:
            if changes:
                await self._apply_changes(changes)
            if top > self._marks[-1][1]:
                self._marks.append((now, top))

    def _since(self, now: float) -> int:
        """The revision to read from: the newest mark at least REVISION_LAG_SECONDS old.

        On PostgreSQL a revision is drawn when a write runs and seen when it commits, so a
        write drawn before a sweep's read may commit after it with a lower revision than
        that sweep saw: reading from a mark a little older sees it (a write slower than
        the lag is seen at the next full sweep). SQLite's writers take turns."""
        while len(self._marks) > 1 and self._marks[1][0] <= now - REVISION_LAG_SECONDS:
            self._marks.pop(0)
        return self._marks[0][1]

    async def _apply_changes(self, changes: list[store.ConfigChange]) -> None:
        """Reload the changed configs of owned targets, and drop the stopped ones."""
        changed, touched = [], set()
        for change in changes:
            watcher = self.targets.get(change.target)
            if watcher is None:
                continue
            snap = watcher.configs.get(change.id)
            if not change.active:
                if snap is not None:
                    del watcher.configs[change.id]
                    touched.add(change.target)
            elif snap is None or snap.version != change.version:
                changed.append(change.id)
        await self._install(await self.db(store.load_configs, changed) if changed else [],
                            touched)

    async def _reload_configs(self) -> None:
        owned = list(self.targets)
        if not owned:
            return
        versions = await self.db(store.config_versions, owned)
        changed = [cid for cid, (target, version) in versions.items()
                   if target in self.targets and (
                       cid not in self.targets[target].configs
                       or self.targets[target].configs[cid].version != version)]
        touched = set()
        for watcher in self.targets.values():
            for cid in [c for c in watcher.configs if c not in versions]:
                del watcher.configs[cid]
                touched.add(watcher.address)
        await self._install(await self.db(store.load_configs, changed) if changed else [],
                            touched)

    async def _install(self, snapshots: list[ConfigSnapshot], touched: set[str]) -> None:
        """Put reloaded snapshots in their watchers (and tell the exit schedule of them and
        of the ``touched`` targets whose configs were dropped)."""
        for snap in snapshots:
            watcher = self.targets.get(snap.target)
            if watcher is not None:
                old = watcher.configs.get(snap.id)
                if old is not None and old.paper == snap.paper:
                    snap.holdings = old.holdings if not snap.holdings else snap.holdings
                    # Copies in flight count on (the store knows only the settled ones).
                    snap.entries = {t: max(n, snap.entries.get(t, 0))
                                    for t, n in old.entries.items()} | {
                        t: n for t, n in snap.entries.items() if t not in old.entries}
                    snap.last_copy = {m: max(old.last_copy.get(m, 0), snap.last_copy.get(m, 0))
                                      for m in old.last_copy.keys() | snap.last_copy.keys()}
                watcher.configs[snap.id] = snap
                touched.add(snap.target)
        if not touched:
            return
        for target in touched:
            if (watcher := self.targets.get(target)) is not None:
                self.exits.update(target, watcher.configs, everything=True)
        self._users = None
        self.wallets.retain()
        await self.wallets.open(s.user_id for s in snapshots if not s.paper)

    def _start_target(self, target: str) -> None:
        watcher = self.targets[target] = self.watcher_for(target)
        if self.feed is not None:
            self.feed.watch(target)
        if self.chain is not None:
            self.chain.targets_changed()
        assert self._nursery is not None
        self._nursery.start_soon(self._run_target, watcher, name=f"copy-target:{target}")
        log.info("engine %s runs target %s", self.name, target)

    def _drop_target(self, target: str) -> None:
        # The accounts no running config needs any more are forgotten once per sweep or
        # heartbeat that dropped targets (each pass walks every config: not once per target).
        watcher = self.targets.pop(target, None)
        self.ownership.forget(target)  # its intents are no longer written under its token
        self.exits.forget(target)
        if watcher is not None:
            watcher.scope.cancel()
            if self.feed is not None:
                self.feed.unwatch(target)
            if self.chain is not None:
                self.chain.targets_changed()
            self._dropped = True
            self._users = None

    def _retain_accounts(self) -> None:
        if self._dropped:
            self._dropped = False
            self.wallets.retain()

    async def _run_target(self, watcher: TargetWatcher) -> None:
        with watcher.scope:
            try:
                # The lease's fencing token goes to the database before anything runs: from
                # then on the engine that held the target before cannot write an intent.
                if await self.ownership.fence(watcher.address, self._register_fence) is None:
                    log.warning("engine %s: lost %s before it started", self.name,
                                watcher.address)
                    if self.targets.get(watcher.address) is watcher:
                        self._drop_target(watcher.address)
                    return
                snaps = await self.db(store.load_configs, [
                    cid for cid, (t, _) in (await self.db(store.config_versions,
                                                          [watcher.address])).items()])
                for snap in snaps:
                    watcher.configs.setdefault(snap.id, snap)
                self._users = None
                await self.wallets.open(c.user_id for c in watcher.configs.values()
                                        if not c.paper)
                await watcher.load_cursor()
                await reconciler.reconcile_target(
                    self.name, watcher.configs, db=self.db,
                    live_engines=self.ownership.live_engines, placer=self.executor,
                    stale_after=self.settings.stale_intent_seconds)
                if self.targets.get(watcher.address) is watcher:
                    self.exits.update(watcher.address, watcher.configs, everything=True)
                self._catch_up(watcher)
            except Exception:
                log.exception("engine %s: could not start target %s", self.name,
                              watcher.address)
                self.targets.pop(watcher.address, None)
                self._users = None
                await self.ownership.release([watcher.address])
                return
            await watcher.run()

    async def _register_fence(self, target: str, token: int) -> int:
        return int(await self.db(fences.register, target, token))

    # -- the feed -------------------------------------------------------------------------

    async def _feed_loop(self) -> None:
        assert self.venue is not None
        stale_after = self.settings.feed_stale_seconds or None
        async with self.venue.activity_feed(list(self.targets),
                                            stale_after=stale_after) as feed:
            self.feed = feed
            for target in self.targets:
                feed.watch(target)
            async for item in feed:
                watcher = self.targets.get(item.wallet)
                if watcher is not None and watcher.ready.is_set():
                    # credited to the activity type that carries the feed now
                    watcher.offer(item, self.detection.feed_source(feed))

    async def _detection_loop(self) -> None:
        """Follow the feed and the chain: which source detects, and what changed."""
        while True:
            # A stale feed (pings answered, no trades) counts as down.
            was_live, was = self.feed_connected, self.detection.source
            self.feed_connected = self.detection.observe(self.feed)
            if self.detection.source == POLL and was != POLL:
                self._feed_lost.set()  # targets waiting out a backstop interval poll now
                self._feed_lost = trio.Event()
            # A drop is told once it has lasted COPY_FEED_STALE_SECONDS: a feed that
            # orders_matched carries again by then (trades silent) needs no notice.
            if was_live and not self.feed_connected:
                self._notice_at = trio.current_time() + self.settings.feed_stale_seconds
            if self.feed_connected:
                self._notice_at = None
            elif self._notice_at is not None and trio.current_time() >= self._notice_at:
                self._notice_at = None
                self._tell_degraded()
            await trio.sleep(0.5)

    def feed_degraded(self) -> bool:
        """The feed carries no trades: stale, down or refused (after it had time to come
        up)."""
        if self.feed_connected or not self._feed_on:
            return False
        if self.feed is not None and self.feed.stale_since is not None:
            return True
        return (trio.current_time() - self._started_at
                >= max(self.settings.feed_stale_seconds, 1.0))

    def _tell_degraded(self) -> None:
        """feed.degraded to every user of the configs running here, in the background (a
        notice never holds detection up); the drop's time is the episode's id."""
        users = sorted({c.user_id for watcher in self.targets.values()
                        for c in watcher.configs.values()})
        if not users or self._nursery is None or self.detection.gap_at is None:
            return
        self._nursery.start_soon(self._emit_degraded, users, self.detection.gap_at.isoformat(),
                                 self.detection.reason)

    async def _emit_degraded(self, users: list[UUID], episode: str, reason: str) -> None:
        try:
            await self.db(copy_notices.feed_degraded, users, self.name, episode, reason)
        except Exception:  # a lost notice must not end the engine
            log.exception("engine %s: feed.degraded notices failed", self.name)


    # -- the chain -----------------------------------------------------------------------

    def _chain_source(self) -> ChainSource | None:
        """On-chain detection over the deployment's chain RPC, when it is on (or, as the
        feed's fallback, stands by) and has one."""
        settings = runtime().settings
        # The fallback stands in for a feed that went quiet; with no feed at all the
        # operator chose polls (COPY_USE_FEED=false, an empty POLYMARKET_RTDS_URL).
        fallback = self.settings.chain_fallback and self._feed_on
        if not (self.settings.use_chain or fallback) or not (
                settings.chain.rpc_url or self.settings.chain_ws_url):
            return None
        contracts = settings.contracts
        chain = ChainSource(self.name, self.settings, settings.chain.rpc_url,
                            (contracts.ctf_exchange, contracts.neg_risk_exchange),
                            lambda: list(self.targets), self._chain_fill,
                            self._pending_refuted, calls=self.detection.chain_calls.add)
        chain.active = self.settings.use_chain  # else: only while the feed is degraded
        return chain

    async def _chain_loop(self, chain: ChainSource) -> None:
        while True:
            try:
                await chain.run()
            except Exception as exc:  # a bad URL or a node's odd answer: retried, reported
                chain.failed(exc)
            await trio.sleep(1.0)

    async def _chain_fallback_loop(self, chain: ChainSource) -> None:
        """Read the chain's logs while the feed is degraded; stop once it has carried trades
        again for ``chain_fallback_linger_seconds`` (a fill in between is read by both)."""
        linger = self.settings.chain_fallback_linger_seconds
        while True:
            while not self.feed_degraded():
                await trio.sleep(0.5)
            log.warning("engine %s: the feed is degraded: reading OrderFilled logs (%s)",
                        self.name, chain.mode)
            chain.active = True
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._chain_loop, chain)
                back_at = None
                while True:
                    await trio.sleep(0.5)
                    if self.feed_degraded():
                        back_at = None
                    elif back_at is None:
                        back_at = trio.current_time()
                    elif trio.current_time() - back_at >= linger:
                        nursery.cancel_scope.cancel()
            chain.active = chain.connected = False
            log.info("engine %s: the feed carries trades again: on-chain reading stands by",
                     self.name)

    async def _chain_fill(self, fill: ExchangeFill, source: str, timestamp: int) -> None:
        """Offer a target's fill seen on chain to its watcher (with its market from Gamma,
        unless a faster source saw it already)."""
        watcher = self.targets.get(fill.maker.lower())
        if watcher is None or not watcher.ready.is_set() or self.venue is None:
            return
        if watcher.has_seen((fill.tx_hash, fill.token_id, fill.side, fill.maker.lower()),
                            source):
            return
        try:
            market = await self.venue.gamma.market_by_token(fill.token_id)
        except VenueError as exc:  # the feed or the poll brings it with its market
            log.info("engine %s: no market for token %s seen on chain: %s", self.name,
                     fill.token_id, exc)
            return
        watcher.offer(activity_item(fill, market, timestamp), source)

    async def _pending_refuted(self, fill: ExchangeFill, why: str) -> None:
        """A target's fill seen pending was not mined as seen (``why``): copies of it not
        made yet are dropped, those made are cancelled or marked (pending_matches)."""
        target = fill.maker.lower()
        watcher = self.targets.get(target)
        if watcher is not None:
            watcher.refute((fill.tx_hash, fill.token_id, fill.side, target))
        self.stats.pending_refuted += 1
        try:
            done = await self.db(pending_matches.refute, target, fill.tx_hash, fill.token_id,
                                 fill.side, why)
        except Exception:  # the next owner finds the copy as it is; the log says why
            log.exception("engine %s: settling the copies of the unconfirmed match %s failed",
                          self.name, fill.tx_hash)
            return
        log.warning("engine %s: copies of the unconfirmed match %s (%s): %s", self.name,
                    fill.tx_hash, why, done)


__all__ = ["CopyEngine", "EngineSettings", "TargetWatcher"]
