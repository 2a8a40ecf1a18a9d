"""``CopyEngine``: the long-lived Trio task that owns target leases and mirrors their fills.

The engine owns the nursery, the configs and the wiring of a few parts, each owning its
state and the tasks it starts (``DetectionFanIn`` and ``PollScheduler`` are started with
``nursery.start``):

- ``TargetOwnership`` (``ownership.py``): the target leases, their fencing tokens and
  this engine's fair share. The engine's heartbeat renews the leases every second (a
  target whose lease could not be renewed was taken over and stops at once); the lease
  clock stops every target when no renewal came back for the lease time less a margin
  (Redis out of reach), before any lease can expire; its sweep, every second or when nudged by a
  control job or pub/sub message, reads the configs written since its last look (their
  revision), lets the ownership release and claim targets, and reloads configs whose
  version changed, so edits apply without a restart.
- ``TargetWatcher`` (``watcher.py``), one per owned target: polling, de-duplication and
  cursor, and the task that hands the target's fills to the executor one at a time.
- ``DetectionFanIn`` (``fan_in.py``): the global RTDS activity feed (one connection,
  filtered locally) and, when on-chain detection is on, ``ChainSource``
  (``chain_source.py``: the exchanges' ``OrderFilled`` logs of the owned targets and
  pending match calls; with it off but a chain RPC configured, it stands by and reads the
  logs only while the feed is degraded), fanned in to the watchers; which source detects,
  and the ``feed.degraded`` notice.
- ``PollScheduler`` (``polls.py``): each target's poll interval and first-poll turn, a
  resumed target's catch-up from the feed's history, and the recheck loop
  (``reconciler.recheck``): open live intents (this engine's, and those of its configs
  whose engine died) are looked up again until the venue's answer settles them.
- ``QuoteSource`` (``quotes.py``): markets, and books from the CLOB market channel.
- ``FillExecutor`` (``fill_executor.py``): decisions, copy execution, TP/SL exits; built
  with the engine's ``SendLease`` (fencing tokens, the lease clock) and its spawner.
- ``ExitSchedule`` (``exits.py``): which targets have exit work and when (held tokens'
  book moves on the market channel, exit-before-end timers), so no pass visits every
  config.
- ``CopierWallets`` (``copier_wallets.py``): the copiers' opened accounts and estimates,
  read once per deployment and shared through Redis (``shared_balances.py``).

A fill becomes one intent per config (copied or skipped, with the reason); the live copies
are recorded with their orders in one transaction and sent concurrently
(``services.copying.execution``). No target trade is ever mirrored twice, and no order leaves
before its record.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import redis
import trio

from models import database
from models.base import db as bound_database
from services.copying import fences
from services.platform import copy_control, metrics, venues
from venue.client import AsyncVenueClient
from worker.copy_engine import reconciler, store
from worker.copy_engine.chain_source import ChainSource
from worker.copy_engine.copier_wallets import CopierWallets
from worker.copy_engine.detection import DetectionSource
from worker.copy_engine.exits import ExitSchedule
from worker.copy_engine.fan_in import DetectionFanIn
from worker.copy_engine.fill_executor import FillExecutor
from worker.copy_engine.ownership import SendLease, TargetOwnership
from worker.copy_engine.polls import PollScheduler
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
        self.detection = DetectionSource(name)
        self._wake = trio.Event()
        self._nursery: trio.Nursery | None = None
        self._db_limiter = trio.CapacityLimiter(self.settings.db_threads)
        self.ownership = TargetOwnership(redis_client, prefix, name, self.settings.lease_ms,
                                         self.redis_call, self.settings.lease_margin)
        self.quotes = QuoteSource(self.settings, self.stats)
        # Copiers' balance reads have their own slots: they never starve detection polls.
        self._balance_limiter = trio.CapacityLimiter(self.settings.balance_concurrency)
        self.wallets = CopierWallets(name, self.settings, self.db, self._balance_limiter,
                                     self._account_users, lambda: self.ownership.engines,
                                     SharedBalances(redis_client, prefix, name, self.redis_call))
        self.lease = SendLease(self.ownership)  # fences the executor while the engine runs
        self.executor = FillExecutor(name, self.settings, self.stats, self.quotes,
                                     self.wallets, self.db, lease=self.lease,
                                     spawn=self._spawn)
        self.exits = ExitSchedule(self.settings, self._request_exits, self._market_end,
                                  self.quotes.live, self.executor.opening_due,
                                  self.quotes.live_bid)
        self.quotes.moved = self.exits.moved
        self.fan_in = DetectionFanIn(name, self.settings, self.stats, self.detection,
                                     lambda: self.targets, lambda: self._venue, self.db)
        self.polls = PollScheduler(name, self.settings, self.detection, self.fan_in,
                                   self.ownership, lambda: self.targets, self.executor,
                                   self._running_configs, self.db)
        self._watch = WatchContext(
            name=name, settings=self.settings, stats=self.stats, executor=self.executor,
            db=self.db, polls=self.polls, venue=lambda: self._venue, handled=self._handled)
        self._active: dict[str, int] = {}  # active targets (and config counts) as last read
        # Config revisions already read: (monotonic time, highest revision) per sweep; a
        # sweep reads from the newest mark at least REVISION_LAG_SECONDS old (see sweep).
        self._marks: list[tuple[float, int]] = []
        self._full_sweep = True
        self._full_sweep_at = 0.0
        self._dropped = False  # targets were dropped since the accounts were last retained
        self._users: set[UUID] | None = None  # users of the live configs running here
        self.running = False

    # -- plumbing ---------------------------------------------------------------------

    @property
    def feed(self) -> Any:
        """The RTDS activity feed, while it is connected (the fan-in's)."""
        return self.fan_in.feed

    @property
    def feed_connected(self) -> bool:
        """The feed is connected and carries trades (not stale)."""
        return self.fan_in.connected

    @property
    def chain(self) -> ChainSource | None:
        """On-chain detection, when on (the fan-in's)."""
        return self.fan_in.chain

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

    def _spawn(self, task: Callable[..., Any], *args: Any) -> None:
        """Start ``task`` in the engine's nursery (the executor's background work)."""
        if self._nursery is None:
            raise RuntimeError("the copy engine is not running")
        self._nursery.start_soon(task, *args)

    async def redis_call(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run a blocking Redis call in a thread."""
        return await trio.to_thread.run_sync(function, *args)

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
                self.running = self.lease.running = True
                nursery.start_soon(self._heartbeat_loop)
                nursery.start_soon(self._lease_clock_loop)
                # The fan-in's sources are up before the first sweep starts targets.
                await nursery.start(self.fan_in.run)
                await nursery.start(self.polls.run)
                nursery.start_soon(self._sweep_loop)
                nursery.start_soon(self._control_loop)
                if self.settings.use_book_feed and venue.config.market_ws_url:
                    nursery.start_soon(self.quotes.run)
                nursery.start_soon(self.exits.run)
                nursery.start_soon(self.wallets.run)
                if database.has_log_to_fold():
                    nursery.start_soon(self._fold_log_loop)
                task_status.started(self)
        finally:
            self.running = self.lease.running = False
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
                lost = await self.ownership.renew(owned)
                await self.ownership.heartbeat(self._heartbeat_fields())
            except redis.RedisError as exc:
                log.error("engine %s: lease renewal failed: %s", self.name, exc)
                continue
            for target in lost:
                if target in self.targets:
                    log.warning("engine %s lost the lease on %s; stopping it", self.name, target)
                    self._drop_target(target)
            # Stopped by the lease clock while this renewal was on its way: let them go (a
            # claim takes them again, with a new fencing token). Set operations: no Python
            # step per running target.
            if stopped := set(owned).difference(lost, self.targets):
                await self.ownership.release(list(stopped))
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

    def _request_exits(self, target: str, tokens: frozenset[str] | None) -> bool:
        """The exit schedule's check of a target (queued behind its fills); False when
        it could not be queued."""
        watcher = self.targets.get(target)
        return watcher is not None and watcher.request_exit_check(tokens)

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
                urgent=self.fan_in.traded_lately):
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
        self.fan_in.watch(target)
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
            self.fan_in.unwatch(target)
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
                self.polls.catch_up(watcher)
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


__all__ = ["CopyEngine", "EngineSettings", "TargetWatcher"]
