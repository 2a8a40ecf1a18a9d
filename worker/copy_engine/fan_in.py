"""``DetectionFanIn``: the sources that detect target fills, fanned in to their watchers.

It owns the global RTDS activity feed (one connection, filtered locally), the chain's
``OrderFilled`` logs when on-chain detection is on (or stands by as the feed's fallback:
read only while the feed is degraded), and the detection loop that follows which source
detects now and tells the users once a feed drop lasts (``feed.degraded``). Started in
the engine's nursery; each of its loops runs in its own nursery and ends with the engine.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from uuid import UUID

import trio

from chain.exchange_events import ExchangeFill
from services.copying import copy_notices, pending_matches
from services.platform.runtime import runtime
from venue.client import AsyncVenueClient
from venue.errors import VenueError
from worker.copy_engine.chain_source import ChainSource, activity_item
from worker.copy_engine.detection import POLL, DetectionSource
from worker.copy_engine.settings import EngineSettings, EngineStats
from worker.copy_engine.watcher import TargetWatcher

log = logging.getLogger("copytrade.copy_engine")


class DetectionFanIn:
    """The feed and the chain, fanned in to the watchers of ``targets()`` (owns their loops)."""

    def __init__(self, name: str, settings: EngineSettings, stats: EngineStats,
                 detection: DetectionSource, targets: Callable[[], dict[str, TargetWatcher]],
                 venue: Callable[[], AsyncVenueClient | None],
                 db: Callable[..., Any]) -> None:
        self.name = name
        self.settings = settings
        self.stats = stats
        self.detection = detection
        self._targets = targets
        self._venue = venue
        self._db = db
        self.feed: Any = None
        self.connected = False  # the feed is connected and carrying trades (not stale)
        self.chain: ChainSource | None = None  # on-chain detection, when on
        self.lost = trio.Event()  # set (and replaced) each time the feed stops
        self._nursery: trio.Nursery | None = None
        self._started_at = 0.0  # trio time the fan-in started (the feed's first grace)
        self._feed_on = False  # an RTDS feed runs (False: detection never has a feed)
        self._notice_at: float | None = None  # when the feed's drop is told (trio time)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Run the feed, the chain and the detection loop until cancelled."""
        venue = self._venue()
        assert venue is not None
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._started_at = trio.current_time()
            self._feed_on = bool(self.settings.use_feed and venue.config.rtds_url)
            if self._feed_on:
                nursery.start_soon(self._feed_loop)
            self.chain = self.detection.chain = self._chain_source()
            if self.chain is not None:
                nursery.start_soon(self._chain_loop if self.chain.active
                                   else self._chain_fallback_loop, self.chain)
            nursery.start_soon(self._detection_loop)
            task_status.started()

    def watch(self, target: str) -> None:
        """Follow a target the engine started."""
        if self.feed is not None:
            self.feed.watch(target)
        if self.chain is not None:
            self.chain.targets_changed()

    def unwatch(self, target: str) -> None:
        """Stop following a target the engine dropped."""
        if self.feed is not None:
            self.feed.unwatch(target)
        if self.chain is not None:
            self.chain.targets_changed()

    def traded_lately(self, target: str) -> bool:
        """The feed carried a trade of ``target`` lately: a take-over claims it first, so
        that a dead engine's gap is copied in the first steps, not the last."""
        return self.feed is not None and self.feed.traded(target)

    # -- the feed -------------------------------------------------------------------------

    async def _feed_loop(self) -> None:
        venue = self._venue()
        assert venue is not None
        stale_after = self.settings.feed_stale_seconds or None
        targets = self._targets()
        async with venue.activity_feed(list(targets), stale_after=stale_after) as feed:
            self.feed = feed
            for target in self._targets():
                feed.watch(target)
            async for item in feed:
                watcher = self._targets().get(item.wallet)
                if watcher is not None and watcher.ready.is_set():
                    # credited to the activity type that carries the feed now
                    watcher.offer(item, self.detection.feed_source(feed))

    async def _detection_loop(self) -> None:
        """Follow the feed and the chain: which source detects, and what changed."""
        while True:
            # A stale feed (pings answered, no trades) counts as down.
            was_live, was = self.connected, self.detection.source
            self.connected = self.detection.observe(self.feed)
            if self.detection.source == POLL and was != POLL:
                self.lost.set()  # targets waiting out a backstop interval poll now
                self.lost = trio.Event()
            # A drop is told once it has lasted COPY_FEED_STALE_SECONDS: a feed that
            # orders_matched carries again by then (trades silent) needs no notice.
            if was_live and not self.connected:
                self._notice_at = trio.current_time() + self.settings.feed_stale_seconds
            if self.connected:
                self._notice_at = None
            elif self._notice_at is not None and trio.current_time() >= self._notice_at:
                self._notice_at = None
                self._tell_degraded()
            await trio.sleep(0.5)

    def degraded(self) -> bool:
        """The feed carries no trades: stale, down or refused (after it had time to come
        up)."""
        if self.connected or not self._feed_on:
            return False
        if self.feed is not None and self.feed.stale_since is not None:
            return True
        return (trio.current_time() - self._started_at
                >= max(self.settings.feed_stale_seconds, 1.0))

    def _tell_degraded(self) -> None:
        """feed.degraded to every user of the configs running here, in the background (a
        notice never holds detection up); the drop's time is the episode's id."""
        users = sorted({c.user_id for watcher in self._targets().values()
                        for c in watcher.configs.values()})
        if not users or self._nursery is None or self.detection.gap_at is None:
            return
        self._nursery.start_soon(self._emit_degraded, users, self.detection.gap_at.isoformat(),
                                 self.detection.reason)

    async def _emit_degraded(self, users: list[UUID], episode: str, reason: str) -> None:
        try:
            await self._db(copy_notices.feed_degraded, users, self.name, episode, reason)
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
                            lambda: list(self._targets()), self._chain_fill,
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
            while not self.degraded():
                await trio.sleep(0.5)
            log.warning("engine %s: the feed is degraded: reading OrderFilled logs (%s)",
                        self.name, chain.mode)
            chain.active = True
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._chain_loop, chain)
                back_at = None
                while True:
                    await trio.sleep(0.5)
                    if self.degraded():
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
        watcher = self._targets().get(fill.maker.lower())
        venue = self._venue()
        if watcher is None or not watcher.ready.is_set() or venue is None:
            return
        if watcher.has_seen((fill.tx_hash, fill.token_id, fill.side, fill.maker.lower()),
                            source):
            return
        try:
            market = await venue.gamma.market_by_token(fill.token_id)
        except VenueError as exc:  # the feed or the poll brings it with its market
            log.info("engine %s: no market for token %s seen on chain: %s", self.name,
                     fill.token_id, exc)
            return
        watcher.offer(activity_item(fill, market, timestamp), source)

    async def _pending_refuted(self, fill: ExchangeFill, why: str) -> None:
        """A target's fill seen pending was not mined as seen (``why``): copies of it not
        made yet are dropped, those made are cancelled or marked (pending_matches)."""
        target = fill.maker.lower()
        watcher = self._targets().get(target)
        if watcher is not None:
            watcher.refute((fill.tx_hash, fill.token_id, fill.side, target))
        self.stats.pending_refuted += 1
        try:
            done = await self._db(pending_matches.refute, target, fill.tx_hash, fill.token_id,
                                  fill.side, why)
        except Exception:  # the next owner finds the copy as it is; the log says why
            log.exception("engine %s: settling the copies of the unconfirmed match %s failed",
                          self.name, fill.tx_hash)
            return
        log.warning("engine %s: copies of the unconfirmed match %s (%s): %s", self.name,
                    fill.tx_hash, why, done)


__all__ = ["DetectionFanIn"]
