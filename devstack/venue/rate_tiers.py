"""Per-signer rate-limit tiers as the venue runs them (ACCOUNTS.md §12).

``GET /clob/v1/user/rate-limit-tier`` names a signer's tier (``standard`` until the control
API sets another: ``POST /_sandbox/rate-tiers {tiers: {address: name}}``). With ``enforce``
each signer has an order bucket and a cancel bucket refilling at its tier's rate up to its
burst (docs: api-reference/trading-rate-limits): a request is admitted only when its bucket
holds its whole cost (a batch is admitted whole or not at all), else 429 with
``Retry-After``; ``DELETE /cancel-all`` and ``/cancel-market-orders`` need one token and are
charged one more per order they cancelled afterwards, so the balance can go negative (tiers
up to Gold; from Platinum up it stops at zero). Answers carry ``Poly-RateLimit-Remaining``
and ``Poly-RateLimit-Tier``. The lowest balance each bucket reached is kept for tests.

The table is the venue's (docs, transcribed 2026-08-05); the sandbox keeps its own copy, as
it imports nothing from the app.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from devstack.venue.signer_limits import KINDS

REMAINING_HEADER = "Poly-RateLimit-Remaining"
TIER_HEADER = "Poly-RateLimit-Tier"
# name -> (order rate/s, order burst, cancel rate/s, cancel burst, may go negative)
TIERS: dict[str, tuple[int, int, int, int, bool]] = {
    "standard": (40, 60, 80, 120, True),
    "copper": (60, 90, 120, 180, True),
    "bronze": (80, 120, 160, 240, True),
    "silver": (200, 300, 400, 600, True),
    "gold": (400, 600, 800, 1200, True),
    "platinum": (450, 675, 900, 1350, False),
    "diamond": (525, 787, 1050, 1575, False),
    "elite": (600, 900, 1200, 1800, False),
}
DEFAULT_TIER = "standard"
# cancels whose cost is 1 plus the orders they cancelled, charged after the answer
PER_CANCELLED = ("/cancel-all", "/cancel-market-orders")


@dataclass
class Admission:
    """What the limiter decided for one request."""

    admitted: bool
    kind: str
    tier: str
    remaining: float
    retry_after: int = 0


@dataclass
class RateTiers:
    """Each signer's tier, and (``enforce``) its two token buckets."""

    clock: Callable[[], float]
    enforce: bool = False
    refusals: int = 0
    tiers: dict[str, str] = field(default_factory=dict)
    _buckets: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    lowest: dict[tuple[str, str], float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        """Enforcement off, every signer back to the default tier, buckets full."""
        with self._lock:
            self.enforce = False
            self.refusals = 0
            self.tiers.clear()
            self._buckets.clear()
            self.lowest.clear()

    def tier_of(self, signer: str) -> str:
        """The tier the venue names for ``signer``."""
        return self.tiers.get(signer.lower(), DEFAULT_TIER)

    def set_tier(self, signer: str, name: str) -> None:
        """Give ``signer`` tier ``name`` (ValueError for an unknown one); its buckets keep
        their balance, capped at the new burst."""
        if name not in TIERS:
            raise ValueError(f"tier must be one of {', '.join(TIERS)}")
        with self._lock:
            self.tiers[signer.lower()] = name

    def _bucket(self, signer: str, kind: str, now: float) -> tuple[list[float], float, int,
                                                                   bool]:
        rates = TIERS[self.tier_of(signer)]
        rate, burst = (rates[0], rates[1]) if kind == "orders" else (rates[2], rates[3])
        bucket = self._buckets.setdefault((signer, kind), [float(burst), now])
        bucket[0] = min(float(burst), bucket[0] + (now - bucket[1]) * rate)
        bucket[1] = now
        return bucket, float(rate), burst, rates[4]

    def admit(self, method: str, path: str, signer: str | None, weight: int
              ) -> Admission | None:
        """Charge a request to its signer's bucket; None when it is no order or cancel (or
        enforcement is off)."""
        kind = KINDS.get((method.upper(), path))
        if not self.enforce or kind is None or not signer:
            return None
        signer = signer.lower()
        cost = 1 if path in PER_CANCELLED else max(1, weight)
        with self._lock:
            bucket, rate, _burst, _negative = self._bucket(signer, kind, self.clock())
            tier = self.tier_of(signer)
            if bucket[0] < cost:
                self.refusals += 1
                wait = math.ceil((cost - bucket[0]) / rate) if rate else 1
                return Admission(False, kind, tier, bucket[0], max(1, wait))
            bucket[0] -= cost
            self._note(signer, kind, bucket[0])
            return Admission(True, kind, tier, bucket[0])

    def charge_cancelled(self, signer: str, cancelled: int) -> float:
        """A cancel-all's cancelled orders, one token each, after the answer: the balance
        may go below zero (for a tier that allows it); the balance now."""
        signer = signer.lower()
        with self._lock:
            bucket, _rate, _burst, negative = self._bucket(signer, "cancels", self.clock())
            bucket[0] -= cancelled
            if not negative:
                bucket[0] = max(0.0, bucket[0])
            self._note(signer, "cancels", bucket[0])
            return bucket[0]

    def _note(self, signer: str, kind: str, balance: float) -> None:
        key = (signer, kind)
        self.lowest[key] = min(self.lowest.get(key, balance), balance)

    def describe(self) -> dict[str, Any]:
        """The switch, each signer's tier, the refusals and each bucket's lowest balance."""
        with self._lock:
            lowest: dict[str, dict[str, Decimal]] = {}
            for (signer, kind), value in self.lowest.items():
                lowest.setdefault(signer, {})[kind] = Decimal(f"{value:.3f}")
            return {"enforce": self.enforce, "tiers": dict(self.tiers),
                    "refusals": self.refusals, "lowest": lowest}
