"""Per-signer rate limits on orders and cancels, in warning mode as the venue runs them.

Since 2026-07-24 the venue counts order and cancel requests per signer and, past the limit,
still serves them but adds a ``Poly-RateLimit-Warning`` header (ACCOUNTS.md §11; the
enforcement date is not announced). The limits are off until the control API sets them
(``POST /_sandbox/signer-limits``); a batch counts as its number of orders. With
``enforce`` the sandbox refuses the excess with 429 instead, as the venue will.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

HEADER = "Poly-RateLimit-Warning"
# (method, path under /clob) -> kind
KINDS: dict[tuple[str, str], str] = {
    ("POST", "/order"): "orders", ("POST", "/orders"): "orders",
    ("DELETE", "/order"): "cancels", ("DELETE", "/orders"): "cancels",
    ("DELETE", "/cancel-all"): "cancels", ("DELETE", "/cancel-market-orders"): "cancels",
}


@dataclass
class SignerLimits:
    """Per-signer limits per kind over ``window`` seconds (0: no limit), and what was sent."""

    clock: Callable[[], float]
    orders: int = 0
    cancels: int = 0
    window: float = 10.0
    enforce: bool = False
    warnings: int = 0
    _sent: dict[tuple[str, str], deque[tuple[float, int]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        """Limits off, counts forgotten."""
        with self._lock:
            self.orders = self.cancels = self.warnings = 0
            self.enforce = False
            self._sent.clear()

    def count(self, method: str, path: str, signer: str | None, weight: int) -> str | None:
        """Count a request; the warning text when it is past its signer's limit, else None."""
        kind = KINDS.get((method.upper(), path))
        limit = getattr(self, kind) if kind else 0
        if not kind or not limit or not signer:
            return None
        now = self.clock()
        with self._lock:
            sent = self._sent.setdefault((signer.lower(), kind), deque())
            while sent and sent[0][0] <= now - self.window:
                sent.popleft()
            sent.append((now, max(1, weight)))
            used = sum(w for _, w in sent)
            if used <= limit:
                return None
            self.warnings += 1
        return (f"per-signer {kind} limit exceeded: {used} in {self.window:g}s "
                f"(limit {limit})")

    def describe(self) -> dict:
        """The switch's settings and how many warnings it gave."""
        return {"orders": self.orders, "cancels": self.cancels, "window": f"{self.window:g}",
                "enforce": self.enforce, "warnings": self.warnings}
