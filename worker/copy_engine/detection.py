"""Which source detects the targets' trades right now, and since when: the RTDS feed while
it is connected and carrying trades, else fast polling of the Data API (feed down or stale).

Shown in the engine's heartbeat (read by ``copytrade status`` and a config's status) and
in the metrics."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from services.platform import metrics

log = logging.getLogger(__name__)

FEED = "feed"
POLL = "poll"


class DetectionSource:
    """The live detection source of one engine and when it became so."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.source = POLL  # until the feed is up and carries trades
        self.since = datetime.now(UTC)
        self.stale_reconnects = 0
        metrics.detection_source(POLL)

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
            (log.info if live else log.warning)(
                "engine %s: trades now detected by %s (%s)", self.name, source, why)
            self.source, self.since = source, datetime.now(UTC)
            metrics.detection_source(source)
        return live

    def fields(self) -> dict[str, str]:
        """The heartbeat's view: ``detection`` (feed|poll) and ``detection_since`` (ISO)."""
        return {"detection": self.source, "detection_since": self.since.isoformat()}
