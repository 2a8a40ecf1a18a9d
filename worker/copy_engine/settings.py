"""A copy engine's timings (``EngineSettings``) and counters (``EngineStats``)."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from config import CopyEngineConfig

# One definition of the engine's timings: the Settings group config.load fills.
EngineSettings = CopyEngineConfig


@dataclass
class EngineStats:
    """Counters for /status and the benchmark."""

    polls: int = 0
    poll_requests: int = 0
    book_requests: int = 0
    book_hits: int = 0  # books taken from the market channel instead of GET /book
    feed_fills: int = 0  # RTDS activity/trades
    matched_fills: int = 0  # RTDS activity/orders_matched
    poll_fills: int = 0
    chain_fills: int = 0  # OrderFilled logs
    pending_fills: int = 0  # match calls before their block
    pending_refuted: int = 0  # pending target fills their mined transaction did not confirm
    duplicates: int = 0
    intents: int = 0
    orders: int = 0
    exit_visits: int = 0  # configs an exit check looked at (the schedule's work)
    # Detection delay (seconds from the fill's time to its first sighting) per source, the
    # latest DELAYS_KEPT of each (the benchmark's per-source figures).
    delays: dict[str, deque[float]] = field(default_factory=dict)
    # Every sighting by each source, first or not, as (transaction hash, epoch seconds):
    # how fast a source is on its own, even one a faster source always beats, timed by
    # whoever knows when the fill happened (the benchmark, to the sub-second).
    sightings: dict[str, deque[tuple[str, float]]] = field(default_factory=dict)

    def detected(self, source: str, delay: float) -> None:
        """Count a fill first seen by ``source`` (feed, matched, poll, chain, pending) after
        ``delay``."""
        name = f"{source}_fills"
        setattr(self, name, getattr(self, name, 0) + 1)
        self.delays.setdefault(source, deque(maxlen=DELAYS_KEPT)).append(delay)

    def sighted(self, source: str, tx_hash: str) -> None:
        """Keep one sighting of the fill in ``tx_hash`` by ``source``, first or not."""
        self.sightings.setdefault(source, deque(maxlen=DELAYS_KEPT)).append(
            (tx_hash, time.time()))


DELAYS_KEPT = 1000
