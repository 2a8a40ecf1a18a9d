"""``CopyEngine``: the long-lived Trio task that owns target leases and mirrors their fills.

Loops (all in one nursery):

- heartbeat: renews this engine's target leases every second; a lease it failed to renew
  was taken over, so that target's tasks stop at once.
- sweep: every second (or when nudged by a control job / pub-sub message) reads which
  targets have active configs, claims free targets up to a fair share of the live
  engines, releases targets with no active configs (or above its share), and reloads
  configs whose version changed, so edits apply without a restart.
- feed: the global RTDS activity feed, filtered locally to owned targets (one connection
  whatever the number of targets).
- per target: a poller (Data API ``/activity`` from the persisted cursor minus an overlap
  window, de-duplicated on the fill's identity) and an executor that handles that
  target's fills and TP/SL checks one at a time.

A fill becomes one intent row per config (copied or skipped, with the reason). The live
copies' orders are planned from the book the decision read and signed with the copiers'
accounts kept open in memory (``accounts.py``); the intents and, for the rows this engine
inserted under the (config, target trade) unique constraint, the orders' durable records
are written in one transaction; then the orders go out concurrently (``placement.py``).
No target trade is ever mirrored twice, and no order leaves before its record.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import math
import random
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

import redis
import trio

from models import database
from models.base import utcnow
from models.copying import (
    INTENT_PENDING,
    INTENT_SKIPPED,
    KIND_MIRROR,
)
from services import (
    copy_control,
    copy_leases,
    copying,
    metrics,
    order_plan,
    orders,
    venue_accounts,
    venues,
)
from services.copy_leases import TargetLeases
from services.copying import Holding, MarketView, TargetFill
from venue.client import AsyncVenueClient
from venue.errors import VenueError, VenueNotFound
from venue.market_feed import BookFeed
from venue.models import ActivityItem, OrderBook
from worker.copy_engine import placement, store
from worker.copy_engine.accounts import AccountCache, WalletSlot
from worker.copy_engine.placement import Quote, Ticket
from worker.copy_engine.store import ConfigSnapshot
from worker.jobs import call_with_database

log = logging.getLogger("copytrade.copy_engine")

STALE_FILL = "stale_fill"


@dataclass(frozen=True)
class EngineSettings:
    """Timings of one engine (defaults suit production; tests shorten them)."""

    lease_ms: int = 5000
    heartbeat_seconds: float = 1.0
    sweep_seconds: float = 1.0
    full_sweep_seconds: float = 15.0  # configs re-read at least this often (else on change)
    poll_seconds: float = 1.0  # Data API polling while the feed is down
    backstop_poll_seconds: float = 5.0  # polling while the feed is up (it only backfills)
    # With the feed up, all targets' backstop polls together stay under this rate (1,000
    # targets: each every 50 s): each costs the venue and this loop a request.
    backstop_polls_per_second: float = 20.0
    backstop_hold_seconds: float = 10.0  # how long a backstop poll waits for copies in flight
    gc_hold_seconds: float = 0.25  # garbage collection put off while copying, at most this
    overlap_seconds: int = 10
    exit_check_seconds: float = 2.0
    max_fill_age_seconds: int = 600
    stale_intent_seconds: float = 120.0
    use_feed: bool = True
    use_book_feed: bool = True  # books from the CLOB market channel once a token is watched
    max_watched_books: int = 500  # tokens followed on the market channel (least recent out)
    db_threads: int = 16
    poll_concurrency: int = 8  # polls in flight at once, whatever the number of targets
    wallet_refresh_seconds: float = 15.0  # collateral estimates re-read from the venue
    account_reopen_seconds: float = 600.0  # opened accounts re-read from the database
    fold_log_seconds: float = 5.0  # SQLite: the log is folded here, not in a copy's commit


@dataclass
class EngineStats:
    """Counters for /status and the benchmark."""

    polls: int = 0
    poll_requests: int = 0
    book_requests: int = 0
    book_hits: int = 0  # books taken from the market channel instead of GET /book
    feed_fills: int = 0
    poll_fills: int = 0
    duplicates: int = 0
    intents: int = 0
    orders: int = 0


@dataclass
class TargetRuntime:
    """One owned target: its configs, dedup memory, cursor and the channel to its executor."""

    address: str
    configs: dict[UUID, ConfigSnapshot] = field(default_factory=dict)
    seen: dict[tuple[str, str, str, str], int] = field(default_factory=dict)
    cursor: int = 0
    processed_ts: int = 0
    saved_ts: int = 0
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    send: Any = None
    receive: Any = None
    ready: trio.Event = field(default_factory=trio.Event)
    last_error: str | None = None


def trade_key(item: ActivityItem) -> str:
    """The stored identity of a target fill (tx hash, asset, side, wallet)."""
    return "|".join(item.dedup_key)


class CopyEngine:
    """Owns target leases and mirrors their fills to every config copying them."""

    def __init__(self, name: str, redis_client: redis.Redis, prefix: str,
                 settings: EngineSettings | None = None,
                 venue_factory: Callable[[], AsyncVenueClient] | None = None) -> None:
        self.name = name
        self.settings = settings or EngineSettings()
        self.prefix = prefix
        self.redis = redis_client
        self.leases = TargetLeases(redis_client, prefix, name, self.settings.lease_ms)
        self.targets: dict[str, TargetRuntime] = {}
        self.stats = EngineStats()
        self.venue_factory = venue_factory or venues.async_client
        self.venue: AsyncVenueClient | None = None
        self.feed: Any = None
        self.feed_connected = False
        self.books: BookFeed | None = None
        self._watched: OrderedDict[str, None] = OrderedDict()  # least recently quoted first
        self._wake = trio.Event()
        self._nursery: trio.Nursery | None = None
        self._db_limiter = trio.CapacityLimiter(self.settings.db_threads)
        self._place_limiter = trio.CapacityLimiter(64)
        # Backstop polls of many targets share the connection pool with the hot path.
        self._poll_limiter = trio.CapacityLimiter(self.settings.poll_concurrency)
        # Copiers' opened venue accounts and collateral estimates, for the configs run here.
        self.accounts = AccountCache(self.settings.wallet_refresh_seconds,
                                     self.settings.account_reopen_seconds)
        self._catalogued: set[str] = set()  # tokens whose market the catalogue holds
        self._active: dict[str, int] = {}  # active targets as last read by a full sweep
        self._fingerprint: Any = None
        self._full_sweep = True
        self._full_sweep_at = 0.0
        self.running = False
        # Fills being copied right now (seen -> answers in): backstop polls wait for none.
        self._copying = 0
        self._quiet = trio.Event()
        self._quiet.set()
        self._gc_held_since: float | None = None

    # -- plumbing ---------------------------------------------------------------------

    async def db(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run blocking database work in a thread with its own connection."""
        def call() -> Any:
            return call_with_database(function, *args, **kwargs)
        return await trio.to_thread.run_sync(call, limiter=self._db_limiter)

    async def redis_call(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run a blocking Redis call in a thread."""
        return await trio.to_thread.run_sync(function, *args)

    @contextlib.contextmanager
    def _copying_now(self) -> Iterator[None]:
        """Mark a fill's copy in progress: backstop polls and garbage collection wait.

        A collection pass of a heap holding thousands of configs takes milliseconds to tens
        of milliseconds; during a copy that is latency. It is put off until no copy is in
        flight; under a stream of overlapping copies, until one ends ``gc_hold_seconds``
        or more after the hold began.
        """
        if self._copying == 0:
            self._quiet = trio.Event()
            if gc.isenabled() and self.settings.gc_hold_seconds > 0:
                gc.disable()
                self._gc_held_since = time.monotonic()
        self._copying += 1
        try:
            yield
        finally:
            self._copying -= 1
            if self._copying == 0:
                self._quiet.set()
            if self._gc_held_since is not None and (
                    self._copying == 0 or time.monotonic() - self._gc_held_since
                    > self.settings.gc_hold_seconds):
                self._gc_held_since = None
                gc.enable()

    def _poll_delay(self) -> float:
        if not self.feed_connected:
            return self.settings.poll_seconds
        return max(self.settings.backstop_poll_seconds,
                   len(self.targets) / self.settings.backstop_polls_per_second)

    def wake(self) -> None:
        """Sweep now (a control job or message said a config changed)."""
        self._full_sweep = True
        self._wake.set()

    def owned_configs(self) -> list[UUID]:
        """Ids of the configs this engine runs."""
        return [c for rt in self.targets.values() for c in rt.configs]

    # -- run ----------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[CopyEngine] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Run until cancelled; leases are released on the way out."""
        self.venue = self.venue_factory()
        # Every poll is a request: httpx's per-request INFO lines would drown the worker log.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        try:
            await self.redis_call(self.leases.heartbeat, self._heartbeat_fields())
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                self.running = True
                nursery.start_soon(self._heartbeat_loop)
                nursery.start_soon(self._sweep_loop)
                nursery.start_soon(self._control_loop)
                if self.settings.use_feed and self.venue.config.rtds_url:
                    nursery.start_soon(self._feed_loop)
                if self.settings.use_book_feed and self.venue.config.market_ws_url:
                    nursery.start_soon(self._book_feed_loop)
                nursery.start_soon(self._exit_loop)
                nursery.start_soon(self._wallet_loop)
                if database.has_log_to_fold():
                    nursery.start_soon(self._fold_log_loop)
                task_status.started(self)
        finally:
            self.running = False
            self.accounts.clear()  # opened keys live no longer than the engine
            with trio.CancelScope(shield=True):
                owned = list(self.targets)
                for rt in self.targets.values():
                    rt.scope.cancel()
                try:
                    await self.redis_call(self.leases.release, owned)
                    await self.redis_call(self.leases.unregister)
                    if owned:  # the others take them now, not at their next sweep
                        await self.redis_call(copy_leases.announce, self.redis, self.prefix)
                except redis.RedisError as exc:
                    log.warning("engine %s could not release leases: %s", self.name, exc)
                await self.venue.aclose()
            log.info("copy engine %s stopped (released %d targets)", self.name, len(owned))

    def _heartbeat_fields(self) -> dict[str, str]:
        metrics.copy_executors(len(self.targets),
                               sum(len(rt.configs) for rt in self.targets.values()))
        return {"heartbeat_at": datetime.now(UTC).isoformat(),
                "targets": str(len(self.targets)),
                "configs": str(sum(len(rt.configs) for rt in self.targets.values())),
                "feed": "up" if self.feed_connected else "down"}

    async def _heartbeat_loop(self) -> None:
        while True:
            await trio.sleep(self.settings.heartbeat_seconds)
            owned = list(self.targets)
            try:
                kept = await self.redis_call(self.leases.renew, owned)
                await self.redis_call(self.leases.heartbeat, self._heartbeat_fields())
            except redis.RedisError as exc:
                log.error("engine %s: lease renewal failed: %s", self.name, exc)
                continue
            for target in owned:
                if target not in kept and target in self.targets:
                    log.warning("engine %s lost the lease on %s; stopping it", self.name, target)
                    self._drop_target(target)

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

        Reading every active config costs tens of milliseconds of CPU at 10,000 configs, so
        it happens only when the configs' fingerprint moved (any create, edit, start, stop
        or delete), when woken, and every ``full_sweep_seconds``; otherwise the leases are
        still checked every sweep against the targets read last time.
        """
        fingerprint = await self.db(store.config_fingerprint)
        full = (self._full_sweep or fingerprint != self._fingerprint
                or time.monotonic() - self._full_sweep_at >= self.settings.full_sweep_seconds)
        self._full_sweep = False
        active = await self.db(store.active_targets) if full else self._active
        engines = await self.redis_call(self.leases.live_engines)
        share = math.ceil(len(active) / max(1, len(engines))) if active else 0
        for target in [t for t in self.targets if t not in active]:
            await self._release_target(target)
        # Targets an operator moved: never back to the engine they left, taken by another
        # at once (above its share) and not shed while the mark lasts.
        moved = await self.redis_call(self.leases.moved_from, list(active))
        if len(engines) > 1 and len(self.targets) > share:
            # Hand surplus targets to the others (they claim them on their next sweep).
            surplus = sorted((t for t in self.targets if t not in moved),
                             key=lambda t: len(self.targets[t].configs))
            for target in surplus[: len(self.targets) - share]:
                await self._release_target(target)
        free = [t for t in active if t not in self.targets and moved.get(t) != self.name]
        room = share - len(self.targets) if len(engines) > 1 else len(free)
        handed = [t for t in free if t in moved]
        if free and (room > 0 or handed):
            holders = await self.redis_call(self.leases.holders, free)
            for target in [t for t in handed if holders[t] == self.name]:
                self._start_target(target)  # an operator handed its lease to this engine
            unheld = [t for t in free if holders[t] is None]
            candidates = ([t for t in unheld if t in moved]
                          + [t for t in unheld if t not in moved][:max(room, 0)])
            for target in await self.redis_call(self.leases.claim, candidates):
                self._start_target(target)
        if full:
            await self._reload_configs()
            self._active, self._fingerprint = active, fingerprint
            self._full_sweep_at = time.monotonic()

    async def _reload_configs(self) -> None:
        owned = list(self.targets)
        if not owned:
            return
        versions = await self.db(store.config_versions, owned)
        changed = [cid for cid, (target, version) in versions.items()
                   if target in self.targets and (
                       cid not in self.targets[target].configs
                       or self.targets[target].configs[cid].version != version)]
        snapshots = await self.db(store.load_configs, changed) if changed else []
        for snap in snapshots:
            rt = self.targets.get(snap.target)
            if rt is not None:
                old = rt.configs.get(snap.id)
                if old is not None and old.paper == snap.paper:
                    snap.holdings = old.holdings if not snap.holdings else snap.holdings
                rt.configs[snap.id] = snap
        for rt in self.targets.values():
            for cid in [c for c in rt.configs if c not in versions]:
                del rt.configs[cid]
        self._retain_accounts()
        await self.open_accounts(s.user_id for s in snapshots if not s.paper)

    def _start_target(self, target: str) -> None:
        rt = TargetRuntime(address=target)
        rt.send, rt.receive = trio.open_memory_channel(10000)
        self.targets[target] = rt
        if self.feed is not None:
            self.feed.watch(target)
        assert self._nursery is not None
        self._nursery.start_soon(self._run_target, rt, name=f"copy-target:{target}")
        log.info("engine %s runs target %s", self.name, target)

    def _drop_target(self, target: str) -> None:
        rt = self.targets.pop(target, None)
        if rt is not None:
            rt.scope.cancel()
            if self.feed is not None:
                self.feed.unwatch(target)
            self._retain_accounts()

    async def _release_target(self, target: str) -> None:
        self._drop_target(target)
        await self.redis_call(self.leases.release, [target])
        log.info("engine %s released target %s", self.name, target)

    # -- one target --------------------------------------------------------------------

    async def _run_target(self, rt: TargetRuntime) -> None:
        with rt.scope:
            try:
                snaps = await self.db(store.load_configs, [
                    cid for cid, (t, _) in (await self.db(store.config_versions,
                                                          [rt.address])).items()])
                for snap in snaps:
                    rt.configs.setdefault(snap.id, snap)
                await self.open_accounts(c.user_id for c in rt.configs.values() if not c.paper)
                cursor = await self.db(store.read_cursor, rt.address)
                if cursor is None:
                    cursor = int(time.time()) - 1
                    await self.db(store.write_cursor, rt.address, cursor)
                rt.cursor = rt.processed_ts = rt.saved_ts = cursor
                from worker.copy_engine import reconciler

                await reconciler.reconcile_target(self, rt)
            except Exception:
                log.exception("engine %s: could not start target %s", self.name, rt.address)
                self.targets.pop(rt.address, None)
                await self.redis_call(self.leases.release, [rt.address])
                return
            rt.ready.set()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._poll_loop, rt)
                nursery.start_soon(self._executor_loop, rt)

    def offer(self, rt: TargetRuntime, item: ActivityItem, source: str) -> bool:
        """Queue a target fill for the executor unless already seen; True when queued."""
        if not item.is_trade:
            return False
        key = item.dedup_key
        if key in rt.seen:
            self.stats.duplicates += 1
            return False
        seen_at = datetime.now(UTC)
        try:
            rt.send.send_nowait(("fill", item, seen_at))
        except trio.WouldBlock:
            return False  # the poller finds it again
        rt.seen[key] = item.timestamp
        metrics.copy_detected(source)
        if source == "feed":
            self.stats.feed_fills += 1
        else:
            self.stats.poll_fills += 1
        return True

    async def _poll_loop(self, rt: TargetRuntime) -> None:
        assert self.venue is not None
        # Spread the targets' polls over the interval instead of all at once.
        await trio.sleep(random.random() * self.settings.poll_seconds)
        while True:
            try:
                await self.poll_once(rt)
                rt.last_error = None
            except VenueError as exc:
                rt.last_error = f"polling the venue: {exc}"
                log.warning("engine %s: polling %s failed: %s", self.name, rt.address, exc)
            if rt.processed_ts > rt.saved_ts:
                try:
                    await self.db(store.write_cursor, rt.address, rt.processed_ts)
                    rt.saved_ts = rt.processed_ts
                except Exception:
                    log.exception("engine %s: saving the cursor of %s failed", self.name,
                                  rt.address)
            self._prune_seen(rt)
            await trio.sleep(self._poll_delay())
            if self.feed_connected:
                # A backstop poll is never urgent: it waits for copies in flight, whose
                # latency its request and parsing on this loop would add to (a while at
                # most, so a stream of fills cannot starve it).
                with trio.move_on_after(self.settings.backstop_hold_seconds):
                    await self._quiet.wait()

    async def poll_once(self, rt: TargetRuntime) -> int:
        """Read the target's fills since its cursor minus the overlap; how many were new."""
        assert self.venue is not None
        start = max(0, rt.cursor - self.settings.overlap_seconds)
        new = 0
        offset = 0
        while True:
            async with self._poll_limiter:
                rows = await self.venue.data.activity(rt.address, types="TRADE", start=start,
                                                      limit=500, offset=offset,
                                                      sort_direction="ASC")
            self.stats.poll_requests += 1
            for item in rows:
                if self.offer(rt, item, "poll"):
                    new += 1
                rt.cursor = max(rt.cursor, item.timestamp)
            if len(rows) < 500:
                break
            offset += len(rows)
        self.stats.polls += 1
        return new

    def _prune_seen(self, rt: TargetRuntime) -> None:
        horizon = rt.cursor - self.settings.overlap_seconds - 60
        if len(rt.seen) > 1000:
            rt.seen = {k: v for k, v in rt.seen.items() if v >= horizon}

    async def _executor_loop(self, rt: TargetRuntime) -> None:
        async for kind, item, seen_at in rt.receive:
            try:
                if kind == "fill":
                    await self.handle_fill(rt, item, seen_at)
                    rt.processed_ts = max(rt.processed_ts, item.timestamp)
                else:
                    await self.check_exits(rt)
            except Exception as exc:
                log.exception("engine %s: handling %s of %s failed", self.name, kind,
                              rt.address)
                rt.last_error = f"{type(exc).__name__}: {exc}"
                try:
                    await self.db(store.record_error, list(rt.configs), rt.last_error)
                except Exception:
                    log.exception("could not record the error")
                if kind == "fill":
                    rt.seen.pop(item.dedup_key, None)  # let the poller retry it

    # -- the feed -------------------------------------------------------------------------

    async def _feed_loop(self) -> None:
        assert self.venue is not None
        async with self.venue.activity_feed(list(self.targets)) as feed:
            self.feed = feed
            for target in self.targets:
                feed.watch(target)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._feed_status, feed)
                async for item in feed:
                    rt = self.targets.get(item.wallet)
                    if rt is not None and rt.ready.is_set():
                        self.offer(rt, item, "feed")

    async def _feed_status(self, feed: Any) -> None:
        while True:
            self.feed_connected = bool(feed.connected)
            await trio.sleep(0.5)

    # -- deciding and placing --------------------------------------------------------------

    async def _book_feed_loop(self) -> None:
        assert self.venue is not None
        async with self.venue.book_feed() as books:
            self.books = books
            try:
                await trio.sleep_forever()
            finally:
                self.books = None
                self._watched.clear()

    async def _book(self, token_id: str) -> OrderBook:
        """The token's live book: from the market channel when it follows the token, else
        read now (and followed from then on, so the next fill in it skips the read)."""
        assert self.venue is not None
        books = self.books
        book = books.book(token_id) if books is not None else None
        if book is not None:
            self.stats.book_hits += 1
            self._watched.move_to_end(token_id)
            return book
        book = await self.venue.clob.book(token_id)
        self.stats.book_requests += 1
        if books is not None and self.books is books:
            books.seed(book)  # the channel's books lack the minimum size and neg-risk flag
            if token_id not in self._watched:
                books.watch([token_id])
            self._watched[token_id] = None
            self._watched.move_to_end(token_id)
            while len(self._watched) > self.settings.max_watched_books:
                stale, _ = self._watched.popitem(last=False)
                books.unwatch([stale])
        return book

    async def quote(self, token_id: str) -> Quote:
        """The token's market (cached) with the live book: what deciding and placing need."""
        assert self.venue is not None
        market = await self.venue.gamma.market_by_token(token_id)
        book = await self._book(token_id)
        names = [n for tag in market.tags for n in (tag.label, tag.slug) if n]
        view = MarketView(
            category=market.tags[0].label if market.tags else "",
            tick_size=book.tick_size or market.tick_size or copying.DEFAULT_TICK,
            min_order_size=book.min_order_size or market.min_order_size
            or copying.DEFAULT_MIN_SIZE,
            best_bid=book.best_bid, best_ask=book.best_ask,
            accepting_orders=market.accepting_orders and not market.closed,
            categories=copying.normalise_categories(names))
        return Quote(view=view, book=book, info=order_plan.market_info_from(token_id, market,
                                                                             book),
                     market=market)

    async def market_view(self, token_id: str) -> MarketView:
        """Category and limits (cached) with the live top of the book."""
        return (await self.quote(token_id)).view

    async def handle_fill(self, rt: TargetRuntime, item: ActivityItem, seen_at: datetime
                          ) -> list[dict[str, Any]]:
        """Decide for every config of the target, write the intents, place the copies."""
        configs = list(rt.configs.values())
        if not configs:
            return []
        with self._copying_now():
            return await self._handle_fill(rt, item, seen_at, configs)

    async def _handle_fill(self, rt: TargetRuntime, item: ActivityItem, seen_at: datetime,
                           configs: list[ConfigSnapshot]) -> list[dict[str, Any]]:
        fill = TargetFill(
            key=trade_key(item), wallet=item.wallet, token_id=item.asset,
            side=item.side.upper(), size=item.size, price=item.price,
            timestamp=item.timestamp, condition_id=item.condition_id, outcome=item.outcome,
            outcome_index=item.outcome_index, market_slug=item.slug,
            tx_hash=item.transaction_hash)
        age = seen_at.timestamp() - item.timestamp
        quote = await self.quote(item.asset)
        market = quote.view
        target_after = None
        if fill.side == copying.SELL and any(
                c.holdings.get(fill.token_id, Holding()).shares > 0 for c in configs):
            positions = await self.venue.data.positions(rt.address,  # type: ignore[union-attr]
                                                         market=item.condition_id)
            target_after = sum((p.size for p in positions if p.asset == fill.token_id),
                               Decimal(0))
        rows = []
        for config in configs:
            if config.started_ts and item.timestamp < config.started_ts - 2:
                continue  # the fill predates this config's start: not its business
            if age > self.settings.max_fill_age_seconds:
                decision = copying.Decision(
                    action="skip", token_id=fill.token_id, side=fill.side, reason=STALE_FILL,
                    detail=f"Seen {int(age)} s after the target traded; too late to copy.")
            else:
                decision = copying.decide(
                    config.rules, fill, market,
                    config.holdings.get(fill.token_id, Holding()),
                    target_position_after=target_after)
            rows.append(self._intent_row(config, fill, decision, seen_at, KIND_MIRROR,
                                         fill.key))
        return await self.execute(rt.configs, rows, quote)

    def _intent_row(self, config: ConfigSnapshot, fill: TargetFill | None,
                    decision: copying.Decision, seen_at: datetime, kind: str, key: str
                    ) -> dict[str, Any]:
        delay = None
        if fill is not None:
            delay = max(0, int((seen_at.timestamp() - fill.timestamp) * 1000))
        return {
            "id": uuid.uuid4(), "config": config.id, "user_id": config.user_id,
            "kind": kind, "target_trade_key": key, "target_address": config.target,
            "target_side": fill.side if fill else None,
            "target_size": fill.size if fill else None,
            "target_price": fill.price if fill else None,
            "target_timestamp": fill.timestamp if fill else None,
            "target_tx_hash": fill.tx_hash if fill else None,
            "token_id": decision.token_id,
            "condition_id": fill.condition_id if fill else "",
            "outcome": fill.outcome if fill else "",
            "outcome_index": fill.outcome_index if fill else None,
            "market_slug": fill.market_slug if fill else "",
            "paper": config.paper,
            "status": INTENT_PENDING if decision.copies else INTENT_SKIPPED,
            "reason": decision.reason, "detail": decision.detail,
            "side": decision.side if decision.copies else None,
            "size": decision.size if decision.copies else None,
            "price": decision.price, "usdc": decision.usdc if decision.copies else None,
            "seen_at": seen_at, "detection_delay_ms": delay, "worker": self.name,
            "created_at": seen_at,
        }

    async def execute(self, configs: dict[UUID, ConfigSnapshot], rows: list[dict[str, Any]],
                      quote: Quote, *, insert: bool = True) -> list[dict[str, Any]]:
        """Record intents (``insert``) and place their orders: live ones as one batch.

        The live orders are prepared from ``quote`` and the open accounts, written with the
        intents in one transaction, sent concurrently, and settled in one transaction
        (``placement.py``). Without ``insert`` the rows are stored intents re-placed after a
        restart. Returns the rows recorded.
        """
        tickets = [Ticket(row=row, user_id=configs[row["config"]].user_id) for row in rows
                   if row["status"] == INTENT_PENDING and not row["paper"]
                   and row["config"] in configs]
        token = quote.info.token_id
        ready = functools.partial(placement.ready, rows, tickets, quote, self.accounts,
                                  insert=insert, catalogue_market=token not in self._catalogued)
        recorded, short = await self.db(functools.partial(ready, final=False))
        if short:  # the estimate says the wallet cannot pay: ask the venue before skipping
            await self.refresh_balances({t.user_id for t in short})
            recorded, _ = await self.db(functools.partial(ready, final=True))
        assert recorded is not None
        if tickets:
            self._catalogued.add(token)  # its market is in the catalogue now
        self.stats.intents += len(recorded) if insert else 0
        recorded_ids = {row["id"] for row in recorded}
        going = [t for t in tickets if t.order is not None]
        paper = [row for row in recorded if row["paper"] and row["status"] == INTENT_PENDING]
        # Recorded orders go out and are settled even if the target is being dropped.
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for ticket in going:
                    nursery.start_soon(self._send, ticket)
                for row in paper:
                    config = configs.get(row["config"])
                    if config is not None:
                        nursery.start_soon(self.place_intent, config, row)
            if going:
                try:
                    await self.db(placement.settle, going,
                                  {cid: c.paper for cid, c in configs.items()})
                finally:
                    self._after_settle(configs, going)
        for ticket in tickets:  # reserved for orders that were not recorded (duplicates)
            if ticket.order is None and ticket.reserved and ticket.row["id"] not in \
                    recorded_ids:
                self._release(ticket)
        self.stats.orders += len(going)
        return recorded

    async def _send(self, ticket: Ticket) -> None:
        assert self.venue is not None and ticket.prepared is not None
        limiter = self._place_limiter
        try:
            # A free slot is taken without a checkpoint: the fill's orders are written in the
            # loop's first pass over them, not after a round trip through the scheduler each.
            limiter.acquire_nowait()
        except trio.WouldBlock:
            await limiter.acquire()
        try:
            ticket.sent_at = utcnow()
            ticket.answer = await orders.post_async(self.venue, ticket.prepared)
        finally:
            limiter.release()
        refused = ticket.answer.refused
        if refused is not None and refused.status in (401, 403):
            self.accounts.drop(ticket.user_id)  # credentials refused: re-open them next time

    def _after_settle(self, configs: dict[UUID, ConfigSnapshot], tickets: list[Ticket]
                      ) -> None:
        for ticket in tickets:
            self._release(ticket)
            config = configs.get(ticket.row["config"])
            if config is not None and ticket.holding is not None:
                config.holdings[ticket.row["token_id"]] = ticket.holding
                config.opened[ticket.row["token_id"]] = ticket.opened
            changes = ticket.outcome.changes if ticket.outcome else {}
            if changes.get("reason") == "insufficient_balance":
                slot = self.accounts.get(ticket.user_id)
                if slot is not None:
                    slot.refreshed_at = 0.0  # the venue disagreed: re-read it soon

    def _release(self, ticket: Ticket) -> None:
        slot = self.accounts.get(ticket.user_id)
        if slot is not None and (ticket.reserved or ticket.outcome is not None):
            slot.release(ticket.reserved, placement.spent(ticket))
            ticket.reserved = Decimal(0)

    async def place_intent(self, config: ConfigSnapshot, row: dict[str, Any]) -> None:
        """Place one stored intent's order (paper, or live re-placed after a restart)."""
        if not config.paper and not row.get("paper", False):
            quote = await self.quote(row["token_id"])
            await self.execute({config.id: config}, [{**row, "paper": False}], quote,
                               insert=False)
            return

        def work() -> Holding | None:
            outcome = placement.place(row, user_id=config.user_id, paper=config.paper)
            store.settle_intent(row["id"], outcome.changes)
            if outcome.filled_size > 0:
                holding, opened = store.apply_position(
                    config.id, config.paper, row["token_id"], row["side"],
                    outcome.filled_size, outcome.filled_value,
                    condition_id=row.get("condition_id", ""),
                    market_slug=row.get("market_slug", ""), outcome=row.get("outcome", ""))
                config.opened[row["token_id"]] = opened
                return holding
            return None

        async with self._place_limiter:
            holding = await trio.to_thread.run_sync(call_with_database, work)
        self.stats.orders += 1
        if holding is not None:
            config.holdings[row["token_id"]] = holding

    # -- copiers' accounts -------------------------------------------------------------

    def _account_users(self) -> set[UUID]:
        return {c.user_id for rt in self.targets.values() for c in rt.configs.values()
                if not c.paper}

    def _retain_accounts(self) -> None:
        """Forget the opened accounts of users none of whose live configs runs here now."""
        self.accounts.retain(self._account_users())

    async def open_accounts(self, user_ids: Iterable[UUID]) -> None:
        """Open (decrypt) the venue accounts of these copiers once, and read their balances."""
        missing = self.accounts.missing(user_ids)
        if not missing:
            return

        def open_all() -> dict[UUID, venue_accounts.VenueAccount]:
            opened = {}
            for user_id in missing:
                try:
                    opened[user_id] = venue_accounts.account(user_id)
                except Exception as exc:  # placing will report it on the intent
                    log.warning("engine %s: cannot open the account of user %s: %s",
                                self.name, user_id, type(exc).__name__)
            return opened

        opened = await self.db(open_all)
        keep = self._account_users()
        for user_id, account in opened.items():
            if user_id in keep:
                self.accounts.put(user_id, account)
        await self.refresh_balances([u for u in opened if u in keep])

    async def refresh_balances(self, user_ids: Iterable[UUID]) -> None:
        """Re-read the venue's collateral figure of these copiers (concurrently, bounded)."""
        slots = [(u, s) for u in user_ids if (s := self.accounts.get(u)) is not None]
        async with trio.open_nursery() as nursery:
            for user_id, slot in slots:
                nursery.start_soon(self._refresh_balance, user_id, slot)

    async def _refresh_balance(self, user_id: UUID, slot: WalletSlot) -> None:
        assert self.venue is not None
        account = slot.account
        started = self.accounts.now()
        try:
            async with self._poll_limiter:
                balance = await self.venue.clob.balance_allowance(
                    account.creds, asset_type="COLLATERAL",
                    signature_type=account.signature_type)
        except VenueNotFound:  # a venue without the endpoint: the chain's figure
            try:
                balance = await trio.to_thread.run_sync(venue_accounts.collateral_balance,
                                                        account)
            except Exception as exc:
                log.warning("engine %s: balance of user %s: %s", self.name, user_id, exc)
                return
        except VenueError as exc:
            log.warning("engine %s: balance of user %s: %s", self.name, user_id, exc)
            return
        slot.refreshed(balance, started)

    async def _wallet_loop(self) -> None:
        """Keep collateral estimates fresh and re-open accounts now and then."""
        while True:
            await trio.sleep(max(0.5, self.settings.wallet_refresh_seconds / 3))
            try:
                await self.open_accounts(self._account_users())
                await self.refresh_balances([u for u, _ in self.accounts.stale()])
            except Exception:
                log.exception("engine %s: refreshing accounts failed", self.name)

    # -- take-profit / stop-loss -----------------------------------------------------------

    async def _exit_loop(self) -> None:
        while True:
            await trio.sleep(self.settings.exit_check_seconds)
            for rt in list(self.targets.values()):
                if any((c.rules.take_profit_bps or c.rules.stop_loss_bps)
                       and any(h.shares > 0 for h in c.holdings.values())
                       for c in rt.configs.values()):
                    with contextlib.suppress(trio.WouldBlock, trio.ClosedResourceError):
                        rt.send.send_nowait(("exits", None, None))

    async def check_exits(self, rt: TargetRuntime) -> list[dict[str, Any]]:
        """Sell positions whose take-profit or stop-loss is crossed (one intent per opening)."""
        watched = [(c, token, h) for c in rt.configs.values()
                   if c.rules.take_profit_bps or c.rules.stop_loss_bps
                   for token, h in c.holdings.items() if h.shares > 0]
        if not watched:
            return []
        quotes: dict[str, Quote] = {}
        rows = []
        now = datetime.now(UTC)
        for config, token, holding in watched:
            if token not in quotes:
                try:
                    quotes[token] = await self.quote(token)
                except VenueError:
                    continue
            decision = copying.decide_exit(config.rules, token, holding, quotes[token].view)
            if decision is None or not decision.copies:
                continue
            signal = copying.exit_signal(config.rules, holding, quotes[token].view.best_bid)
            key = f"{signal}:{token}:{config.opened.get(token, 0)}"
            rows.append(self._intent_row(config, None, decision, now, signal or "exit", key))
        inserted = []
        for token in dict.fromkeys(row["token_id"] for row in rows):
            inserted += await self.execute(
                rt.configs, [row for row in rows if row["token_id"] == token], quotes[token])
        return inserted


__all__ = ["CopyEngine", "EngineSettings", "TargetRuntime"]
