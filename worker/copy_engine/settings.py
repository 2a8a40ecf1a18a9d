"""A copy engine's timings (``EngineSettings``) and counters (``EngineStats``)."""

from __future__ import annotations

from dataclasses import dataclass


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
