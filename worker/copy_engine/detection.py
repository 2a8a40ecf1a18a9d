"""Which source detects the targets' trades right now, and since when: the RTDS feed while
it is connected and carrying trades, else fast polling of the Data API (feed down or stale);
the feed's last gap (when it last dropped and for how long) and the polls of the last minute;
beside them, on-chain detection (the exchanges' logs: live, down or off, how, since when,
and whether pending matches are read).

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

FEED = "feed"
POLL = "poll"
CHAIN = "chain"  # an exchange's OrderFilled log of a target
PENDING = "pending"  # a target's match call seen before its block
WINDOW = 60  # seconds of polls counted in polls_per_minute


class DetectionSource:
    """The live detection source of one engine and when it became so."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.source = POLL  # until the feed is up and carries trades
        self.since = datetime.now(UTC)
        self.stale_reconnects = 0
        self.chain: Any = None  # the engine's ChainSource, when on-chain detection is on
        self._chain_live = False
        self.chain_since = self.since
        # The feed's last gap: when it stopped carrying trades after having carried them,
        # and when it came back (None while the gap lasts).
        self.gap_at: datetime | None = None
        self.gap_ended: datetime | None = None
        self.reason = ""  # why the source last changed, in words a user reads
        # Polls per whole second of the last minute, oldest first: bounded by WINDOW
        # entries however many targets poll.
        self._polls: deque[list[int]] = deque()
        metrics.detection_source(POLL)

    def polled(self) -> None:
        """Count one Data API poll (for polls_per_minute)."""
        second = int(time.monotonic())
        if self._polls and self._polls[-1][0] == second:
            self._polls[-1][1] += 1
        else:
            self._polls.append([second, 1])
        self._prune(second)

    def polls_per_minute(self) -> int:
        """How many polls this engine made over the last minute."""
        self._prune(int(time.monotonic()))
        return sum(count for _, count in self._polls)

    def _prune(self, second: int) -> None:
        while self._polls and self._polls[0][0] <= second - WINDOW:
            self._polls.popleft()

    def observe(self, feed: Any) -> bool:
        """Read the feed's state; True when the feed is live (connected, trades flowing)."""
        live = bool(feed.connected) and getattr(feed, "stale_since", None) is None
        dropped = getattr(feed, "stale_count", 0)
        if dropped > self.stale_reconnects:
            metrics.feed_stale(dropped - self.stale_reconnects)
            self.stale_reconnects = dropped
        source = FEED if live else POLL
        if source != self.source:
            # Back on the feed is good news; falling back to polling is the warning.
            why = ("feed carries trades" if live else
                   "feed stale: no trade frame" if getattr(feed, "stale_since", None)
                   else "feed down")
            self.reason = ("The live feed carries trades again" if live else
                           "The live feed stopped carrying trades" if why.startswith("feed st")
                           else "The live feed is down")
            (log.info if live else log.warning)(
                "engine %s: trades now detected by %s (%s)", self.name, source, why)
            now = datetime.now(UTC)
            if live and self.gap_at is not None:
                self.gap_ended = now
            elif not live and self.source == FEED:  # a drop of a live feed starts a gap
                self.gap_at, self.gap_ended = now, None
            self.source, self.since = source, now
            metrics.detection_source(source)
        return live

    def gap_seconds(self) -> float | None:
        """How long the last gap lasted (so far, while it lasts); None if none yet."""
        if self.gap_at is None:
            return None
        return ((self.gap_ended or datetime.now(UTC)) - self.gap_at).total_seconds()

    def chain_state(self) -> str:
        """On-chain detection: ``live`` (subscribed, or its last read worked), ``down``, or
        ``off`` (not configured)."""
        chain = self.chain
        if chain is None:
            return "off"
        live = bool(chain.connected)
        if live != self._chain_live:
            (log.info if live else log.warning)(
                "engine %s: on-chain detection %s", self.name, "live" if live else "down")
            self._chain_live, self.chain_since = live, datetime.now(UTC)
        return "live" if live else "down"

    def fields(self) -> dict[str, str]:
        """The heartbeat's view: ``detection`` (feed|poll), ``detection_since`` (ISO), the
        last gap's start (ISO) and length in seconds ("" if none) and ``polls_per_minute``;
        ``detection_chain`` (live|down|off), its mode (websocket|logs), since when, and
        ``detection_pending`` (true while pending transactions are read)."""
        gap = self.gap_seconds()
        chain = self.chain_state()
        return {"detection": self.source, "detection_since": self.since.isoformat(),
                "detection_last_gap_at": self.gap_at.isoformat() if self.gap_at else "",
                "detection_last_gap_seconds": f"{gap:.1f}" if gap is not None else "",
                "polls_per_minute": str(self.polls_per_minute()),
                "detection_chain": chain,
                "detection_chain_mode": self.chain.mode if self.chain is not None else "",
                "detection_chain_since": self.chain_since.isoformat() if chain != "off"
                else "",
                "detection_pending": "true" if self.chain is not None and self.chain.pending
                else "false"}


@dataclass(frozen=True, slots=True)
class Detection:
    """One target fill's detection: when (wall clock, for the record; monotonic, for the
    stage delays after it) and by which source (feed, poll, chain, pending)."""

    at: datetime
    clock: float
    source: str

    @classmethod
    def now(cls, source: str) -> Detection:
        """A detection happening now."""
        return cls(datetime.now(UTC), time.monotonic(), source)
