"""Request tally: how many requests each endpoint received, second by second.

The real venue's rate limits are per endpoint over sliding windows (10 s, and 10 min for
placing orders); a benchmark reads this tally to compare what a deployment sends with
them. Endpoints are counted as ``METHOD /rule`` (the route's rule, e.g.
``GET /data/activity``), so one endpoint's requests share a key whatever their query.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Callable


class RequestTally:
    """Requests per endpoint per whole second of the venue's clock, the last ``keep`` seconds."""

    def __init__(self, clock: Callable[[], float], keep: int = 3600) -> None:
        self._clock = clock
        self._keep = keep
        self._lock = threading.Lock()
        self._seconds: deque[tuple[int, Counter[str]]] = deque()

    def count(self, endpoint: str) -> None:
        """Count one request to ``endpoint`` now."""
        second = int(self._clock())
        with self._lock:
            if not self._seconds or self._seconds[-1][0] != second:
                self._seconds.append((second, Counter()))
                while self._seconds[0][0] <= second - self._keep:
                    self._seconds.popleft()
            self._seconds[-1][1][endpoint] += 1

    def since(self, start: float = 0.0) -> dict[str, dict[str, int]]:
        """Per endpoint, {second: requests} for the seconds from ``start`` on."""
        found: dict[str, dict[str, int]] = {}
        with self._lock:
            for second, counts in self._seconds:
                if second >= int(start):
                    for endpoint, n in counts.items():
                        found.setdefault(endpoint, {})[str(second)] = n
        return found

    def clear(self) -> None:
        """Forget every count."""
        with self._lock:
            self._seconds.clear()


__all__ = ["RequestTally"]
