"""A copy engine's timings (``EngineSettings``) and counters (``EngineStats``)."""

from __future__ import annotations

from dataclasses import dataclass

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
    feed_fills: int = 0
    poll_fills: int = 0
    duplicates: int = 0
    intents: int = 0
    orders: int = 0
