"""Rate budgets: one sliding-window budget per venue endpoint family, at the documented limits.

The venue throttles per endpoint family on sliding windows (Cloudflare: excess requests
are queued, or answered 429). Keeping each family under its own limit here means a burst
of one kind (per-copier balance reads, say) waits for its own budget and never uses up
another's (detection polls, order posts). Limits from docs.polymarket.com
/api-reference/rate-limits (ACCOUNTS.md §7.4 for the CLOB's trading endpoints).

``share`` scales every limit: the part of the venue's allowance one process may use when
several processes trade through one account or address (``VENUE_RATE_BUDGET_SHARE``).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Window:
    """At most ``limit`` requests in any ``seconds``."""

    limit: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Family:
    """Requests to ``api`` matching ``method`` (None: any) and ``path`` (exact, or a prefix
    when it ends with ``/``), and the windows they share."""

    name: str
    api: str
    method: str | None
    path: str
    windows: tuple[Window, ...]

    def matches(self, api: str, method: str, path: str) -> bool:
        """True when a request belongs to this family."""
        if api != self.api or (self.method is not None and method != self.method):
            return False
        return path.startswith(self.path) if self.path.endswith("/") else path == self.path


def _per10(limit: int) -> tuple[Window, ...]:
    return (Window(limit, 10.0),)


# Most specific first: a request counts against the first family it matches.
FAMILIES: tuple[Family, ...] = (
    Family("clob_post_order", "clob", "POST", "/order",
           (Window(3500, 10.0), Window(36000, 600.0))),
    Family("clob_post_orders", "clob", "POST", "/orders",
           (Window(1000, 10.0), Window(15000, 600.0))),
    Family("clob_cancel_order", "clob", "DELETE", "/order",
           (Window(3000, 10.0), Window(30000, 600.0))),
    Family("clob_cancel_orders", "clob", "DELETE", "/orders",
           (Window(1000, 10.0), Window(15000, 600.0))),
    Family("clob_data_orders", "clob", "GET", "/data/order/", _per10(500)),
    Family("clob_data_orders", "clob", "GET", "/data/orders", _per10(500)),
    Family("clob_data_trades", "clob", "GET", "/data/trades", _per10(500)),
    Family("clob_balance_update", "clob", "GET", "/balance-allowance/update", _per10(50)),
    Family("clob_balance", "clob", "GET", "/balance-allowance", _per10(200)),
    Family("clob_api_keys", "clob", None, "/auth/", _per10(100)),
    Family("clob_book", "clob", "GET", "/book", _per10(1500)),
    Family("clob_tick_size", "clob", "GET", "/tick-size", _per10(200)),
    Family("clob", "clob", None, "/", _per10(9000)),
    Family("data_trades", "data", "GET", "/trades", _per10(200)),
    Family("data_positions", "data", "GET", "/positions", _per10(150)),
    Family("data_closed_positions", "data", "GET", "/closed-positions", _per10(150)),
    Family("data", "data", None, "/", _per10(1000)),
    Family("gamma_events", "gamma", "GET", "/events", _per10(500)),
    Family("gamma_markets", "gamma", "GET", "/markets", _per10(300)),
    Family("gamma_search", "gamma", "GET", "/public-search", _per10(350)),
    Family("gamma", "gamma", None, "/", _per10(4000)),
)


def family_of(api: str, method: str, path: str,
              families: tuple[Family, ...] = FAMILIES) -> Family | None:
    """The family a request counts against (None: not budgeted)."""
    return next((f for f in families if f.matches(api, method.upper(), path)), None)


@dataclass
class _Budget:
    windows: tuple[Window, ...]
    sent: tuple[deque[float], ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        self.sent = tuple(deque() for _ in self.windows)

    def wait(self, now: float) -> float:
        """0 (and the request counted) when every window has room, else seconds to wait."""
        longest = 0.0
        for window, sent in zip(self.windows, self.sent, strict=True):
            while sent and sent[0] <= now - window.seconds:
                sent.popleft()
            if len(sent) >= window.limit:
                longest = max(longest, sent[0] + window.seconds - now)
        if longest > 0:
            return longest
        for sent in self.sent:
            sent.append(now)
        return 0.0


class RateBudgets:
    """This process's budgets, one per family; safe from threads (and trio tasks)."""

    def __init__(self, share: float = 1.0, families: tuple[Family, ...] = FAMILIES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not 0 < share <= 1:
            raise ValueError("share must be in (0, 1]")
        self._families = families
        self._clock = clock
        self._lock = threading.Lock()
        self._budgets: dict[str, _Budget] = {}
        for family in families:
            if family.name not in self._budgets:
                scaled = tuple(Window(max(1, int(w.limit * share)), w.seconds)
                               for w in family.windows)
                self._budgets[family.name] = _Budget(scaled)

    def take(self, api: str, method: str, path: str) -> float:
        """Count a request now (answers 0), or the seconds to wait before asking again."""
        family = family_of(api, method, path, self._families)
        if family is None:
            return 0.0
        with self._lock:
            return self._budgets[family.name].wait(self._clock())

    def used(self, name: str) -> int:
        """Requests of family ``name`` counted in its shortest window (tests, metrics)."""
        with self._lock:
            budget = self._budgets[name]
            now = self._clock()
            window, sent = budget.windows[0], budget.sent[0]
            return sum(1 for t in sent if t > now - window.seconds)


__all__ = ["FAMILIES", "Family", "RateBudgets", "Window", "family_of"]
