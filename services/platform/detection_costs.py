"""What each copy-detection source costs and how late it is, for ``copytrade status`` and
docs/operator/detection.md (one table: the figures are written once, here).

The delays were measured on the sandbox with ``bench/copy_latency.py`` (4 configs over 2
targets, 10 samples a run, on the 2-core development machine shared with other jobs; the
load average beside each figure); on Polymarket a source's own lag adds to them (named in
``venue_lag``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class SourceCost:
    """One detection source: how it reads, what it costs, how late it is."""

    source: str  # as ``detection`` names it: feed, matched, chain, poll
    reads: str
    cost: str  # requests a minute, billed calls
    measured: str  # detection delay on the sandbox, p50 / p95, and the load then
    venue_lag: str  # what Polymarket adds


SOURCES = (
    SourceCost("feed", "RTDS activity/trades, one websocket per worker",
               "one socket; nothing metered",
               "p50 556 ms, p95 965 ms (load 12.3)",
               "the venue publishes on matching: about a second"),
    SourceCost("matched", "RTDS activity/orders_matched on the same socket (trades silent "
               "or refused)", "one socket; nothing metered",
               "p50 573 ms, p95 979 ms (load 11.3)",
               "as the feed (unconfirmed type: ACCOUNTS.md §12)"),
    SourceCost("chain", "OrderFilled logs over POLYGON_RPC_URL every COPY_CHAIN_POLL_SECONDS "
               "(read only while the feed is degraded unless COPY_CHAIN_DETECTION)",
               "30 eth_blockNumber + 30 eth_getLogs per 200 targets a minute at 2 s, billed "
               "by hosted RPCs (about 86,000 calls a day)",
               "p50 1.8 s, p95 2.8 s, logs read every 2 s (load 11-12.6)",
               "a Polygon block (2 s) after matching, then the read"),
    SourceCost("poll", "Data API /activity per target every COPY_POLL_SECONDS",
               "one request per target per poll, at most COPY_POLLS_PER_SECOND x 60 a "
               "minute for the deployment (4,800 at the default)",
               "p50 1.3 s, p95 1.4 s, polls every 1 s (load 12.6)",
               "the Data API lags the chain about 22 s"),
)


def table() -> list[dict[str, Any]]:
    """Every source's row, in the order the engine prefers them."""
    return [asdict(row) for row in SOURCES]
