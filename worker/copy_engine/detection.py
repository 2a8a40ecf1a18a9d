"""Which source detects the targets' trades right now, and since when, in the order the
engine prefers them: the RTDS feed while it is connected and carrying trades (``feed`` on
``activity/trades``, ``matched`` on ``activity/orders_matched`` when trades went quiet),
else on-chain ``OrderFilled`` logs while they are read (``chain``: configured, or started
by the engine while the feed is degraded), else fast polling of the Data API (``poll``);
the feed's last gap (when it last dropped and for how long), the polls and chain RPC calls
of the last minute; on-chain detection's own state (live, down, standby or off, how, since
when, and whether pending matches are read).

Shown in the engine's heartbeat (read by ``copytrade status`` and a config's status) and
in the metrics."""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from services.platform import metrics

log = logging.getLogger(__name__)

FEED = "feed"  # RTDS activity/trades
MATCHED = "matched"  # RTDS activity/orders_matched (where trades is disabled: ACCOUNTS.md §12)
POLL = "poll"
CHAIN = "chain"  # an exchange's OrderFilled log of a target
PENDING = "pending"  # a target's match call seen before its block
SOURCES = (FEED, MATCHED, CHAIN, POLL)  # the engine's live source is one of these
WINDOW = 60  # seconds of polls (or RPC calls) counted per minute
CARRIERS = {"trades": FEED, "orders_matched": MATCHED}  # RTDS activity type -> source
# What replaces the feed while it is degraded, and how late that is, in a follower's words.
REPLACED_BY = {
    CHAIN: "the chain's OrderFilled logs replace it (a block or two late: a few seconds)",
    POLL: "Data API polls replace it (about 22 s late: the Data API lags the chain)",
}


class RateWindow:
    """Events per whole second over the last WINDOW seconds (bounded by WINDOW entries)."""

    def __init__(self) -> None:
        self._counts: deque[list[int]] = deque()

    def add(self, count: int = 1) -> None:
        """Count ``count`` events now."""
        second = int(time.monotonic())
        if self._counts and self._counts[-1][0] == second:
            self._counts[-1][1] += count
        else:
            self._counts.append([second, count])
        self._prune(second)

    def per_minute(self) -> int:
        """How many events over the last minute."""
        self._prune(int(time.monotonic()))
        return sum(count for _, count in self._counts)

    def _prune(self, second: int) -> None:
        while self._counts and self._counts[0][0] <= second - WINDOW:
            self._counts.popleft()


class DetectionSource:
    """The live detection source of one engine and when it became so."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.source = POLL  # until the feed is up and carries trades
        self.since = datetime.now(UTC)
        self.stale_reconnects = 0
        self.chain: Any = None  # the engine's ChainSource, when on-chain detection is on
        self._chain_state = "down"  # as last reported (a change moves chain_since)
        self.chain_since = self.since
        # The feed's last gap: when it stopped carrying trades after having carried them,
        # and when it came back (None while the gap lasts).
        self.gap_at: datetime | None = None
        self.gap_ended: datetime | None = None
        self.reason = ""  # why the source last changed, in words a user reads
        self.polls = RateWindow()  # Data API polls
        self.chain_calls = RateWindow()  # chain JSON-RPC calls (billed by hosted RPCs)
        metrics.detection_source(POLL)

    def polled(self) -> None:
        """Count one Data API poll (for polls_per_minute)."""
        self.polls.add()

    def polls_per_minute(self) -> int:
        """How many polls this engine made over the last minute."""
        return self.polls.per_minute()

    def replacement(self) -> str:
        """What replaces the feed while it is degraded (chain when on-chain detection is
        configured or standing by, else poll)."""
        return CHAIN if self.chain is not None else POLL

    def observe(self, feed: Any) -> bool:
        """Read the feed's (None: no feed) and the chain's state; True when the feed is
        live (connected, trades flowing on either activity type)."""
        live = (feed is not None and bool(feed.connected)
                and getattr(feed, "stale_since", None) is None)
        dropped = getattr(feed, "stale_count", 0)
        if dropped > self.stale_reconnects:
            metrics.feed_stale(dropped - self.stale_reconnects)
            self.stale_reconnects = dropped
        chain = self.chain
        chain_live = (chain is not None and getattr(chain, "active", True)
                      and bool(chain.connected))
        source = self.feed_source(feed) if live else CHAIN if chain_live else POLL
        if source != self.source:
            was_live = self.source in (FEED, MATCHED)
            stale = feed is not None and getattr(feed, "stale_since", None)
            why = ("feed carries trades" + (" on activity/orders_matched"
                                            if source == MATCHED else "") if live else
                   "feed stale: no trade frame" if stale else
                   "no feed" if feed is None else "feed down")
            self.reason = self._reason(source, live, stale)
            (log.info if live or source == CHAIN else log.warning)(
                "engine %s: trades now detected by %s (%s)", self.name, source, why)
            now = datetime.now(UTC)
            if live and self.gap_at is not None and not was_live:
                self.gap_ended = now
            elif not live and was_live:  # a drop of a live feed starts a gap
                self.gap_at, self.gap_ended = now, None
            self.source, self.since = source, now
            metrics.detection_source(source)
        return live

    @staticmethod
    def feed_source(feed: Any) -> str:
        """The source a live feed's trades are credited to: ``feed`` (activity/trades) or
        ``matched`` (activity/orders_matched)."""
        return CARRIERS.get(getattr(feed, "carrier", None) or "trades", FEED)

    def _reason(self, source: str, live: bool, stale: Any) -> str:
        """Why the source changed, for a follower: what replaces a degraded feed and how
        late that is (the chain's logs start as the feed degrades when they stand by)."""
        if live:
            return ("The live feed carries trades again" if source == FEED else
                    "The live feed carries trades on activity/orders_matched")
        lost = ("The live feed stopped carrying trades" if stale
                else "The live feed is down")
        return f"{lost}: {REPLACED_BY[source if source == CHAIN else self.replacement()]}"

    def gap_seconds(self) -> float | None:
        """How long the last gap lasted (so far, while it lasts); None if none yet."""
        if self.gap_at is None:
            return None
        return ((self.gap_ended or datetime.now(UTC)) - self.gap_at).total_seconds()

    def chain_state(self) -> str:
        """On-chain detection: ``live`` (subscribed, or its last read worked), ``down``,
        ``standby`` (started only while the feed is degraded, not running now) or ``off``
        (not configured)."""
        chain = self.chain
        if chain is None:
            return "off"
        state = ("standby" if not getattr(chain, "active", True) else
                 "live" if chain.connected else "down")
        if state != self._chain_state:
            (log.warning if state == "down" else log.info)(
                "engine %s: on-chain detection %s", self.name, state)
            self._chain_state, self.chain_since = state, datetime.now(UTC)
        return state

    def fields(self) -> dict[str, str]:
        """The heartbeat's view: ``detection`` (feed|matched|chain|poll),
        ``detection_since`` (ISO), the last gap's start (ISO) and length in seconds ("" if
        none), ``polls_per_minute`` and ``chain_calls_per_minute``; ``detection_chain``
        (live|down|standby|off), its mode (websocket|logs), since when, and
        ``detection_pending`` (true while pending transactions are read)."""
        gap = self.gap_seconds()
        chain = self.chain_state()
        return {"detection": self.source, "detection_since": self.since.isoformat(),
                "detection_last_gap_at": self.gap_at.isoformat() if self.gap_at else "",
                "detection_last_gap_seconds": f"{gap:.1f}" if gap is not None else "",
                "polls_per_minute": str(self.polls_per_minute()),
                "chain_calls_per_minute": str(self.chain_calls.per_minute()),
                "detection_chain": chain,
                "detection_chain_mode": self.chain.mode if self.chain is not None else "",
                "detection_chain_since": self.chain_since.isoformat() if chain != "off"
                else "",
                "detection_pending": "true" if self.chain is not None and self.chain.pending
                else "false"}


@dataclass(frozen=True, slots=True)
class Detection:
    """One target fill's detection: when (wall clock, for the record; monotonic, for the
    stage delays after it) and by which source (feed, matched, poll, chain, pending)."""

    at: datetime
    clock: float
    source: str

    @classmethod
    def now(cls, source: str) -> Detection:
        """A detection happening now."""
        return cls(datetime.now(UTC), time.monotonic(), source)
