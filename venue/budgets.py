"""Rate budgets: one sliding-window budget per venue endpoint family, at the documented limits.

The venue throttles per endpoint family on sliding windows (Cloudflare: excess requests
are queued, or answered 429). Keeping each family under its own limit here means a burst
of one kind (per-copier balance reads, say) waits for its own budget and never uses up
another's (detection polls, order posts). Limits from docs.polymarket.com
/api-reference/rate-limits (ACCOUNTS.md §7.4 for the CLOB's trading endpoints).

``share`` scales every limit: the part of the venue's allowance one process may use when
several processes trade through one account or address (``VENUE_RATE_BUDGET_SHARE``).

Per-signer budgets (ACCOUNTS.md §11: per-signer limits on order and cancel requests, in
warning mode since 2026-07-24, enforcement date not announced): each signer's orders and
cancels also count against an adaptive budget of their own. It starts at the family's limit;
a ``Poly-RateLimit-Warning`` on an answer halves it below the rate that drew the warning,
and each quiet window lets it grow back by a quarter, so a busy follower slows down before
enforcement starts failing its orders instead of after. A batch counts as its number of
orders and is sent whole or waits (never split to fit: batches are all-or-nothing).

Rate-limit tiers (ACCOUNTS.md §12, ``venue.rate_tiers``): once the venue names a signer's
tier (``set_tier``: the transport asks ``GET /v1/user/rate-limit-tier`` before the signer's
first order or cancel, and again every 3 hours), each of its two budgets also keeps the
venue's token bucket: the tier's rate and burst, a request waiting until the bucket holds
its whole weight, and a cancel-all's cancelled orders charged after its answer (``charge``),
which may leave the bucket below zero as the venue's does. The window's ceiling becomes the
tier's rate over the window (or the family's limit, when lower). Both keep 10% below the
venue's figures (``TIER_HEADROOM``).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from venue.rate_tiers import DEFAULT_TIER, TIER_REFRESH_SECONDS, Tier


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
    Family("clob_cancel_all", "clob", "DELETE", "/cancel-all", _per10(250)),
    Family("clob_cancel_all", "clob", "DELETE", "/cancel-market-orders", _per10(250)),
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
    Family("data_positions", "data", "GET", "/v2/positions", _per10(150)),  # its successor
    Family("data_closed_positions", "data", "GET", "/closed-positions", _per10(150)),
    Family("data", "data", None, "/", _per10(1000)),
    Family("gamma_events", "gamma", "GET", "/events", _per10(500)),
    # the keyset lists (ACCOUNTS.md §12) count with the offset lists they replace
    Family("gamma_events", "gamma", "GET", "/events/keyset", _per10(500)),
    Family("gamma_markets", "gamma", "GET", "/markets", _per10(300)),
    Family("gamma_markets", "gamma", "GET", "/markets/keyset", _per10(300)),
    Family("gamma_search", "gamma", "GET", "/public-search", _per10(350)),
    Family("gamma", "gamma", None, "/", _per10(4000)),
)


# Per-signer budgets: (kind, the families that count against it, its 10-second ceiling).
SIGNER_KINDS: tuple[tuple[str, frozenset[str], int], ...] = (
    ("orders", frozenset({"clob_post_order", "clob_post_orders"}), 3500),
    ("cancels", frozenset({"clob_cancel_order", "clob_cancel_orders", "clob_cancel_all"}),
     3000),
)
SIGNER_WINDOW = 10.0
BACKOFF = 0.5    # a warning: at most half the rate that drew it
RECOVERY = 1.25  # each quiet window: a quarter more, up to the ceiling
MIN_SIGNER_LIMIT = 1
TIER_HEADROOM = 0.9  # the part of a tier's rate and burst our buckets use (see ``_size``)


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

    def room(self, now: float) -> float:
        """0 when every window has room for one more request, else seconds to wait."""
        longest = 0.0
        for window, sent in zip(self.windows, self.sent, strict=True):
            while sent and sent[0] <= now - window.seconds:
                sent.popleft()
            if len(sent) >= window.limit:
                longest = max(longest, sent[0] + window.seconds - now)
        return longest

    def count(self, now: float) -> None:
        """Count one request sent at ``now``."""
        for sent in self.sent:
            sent.append(now)


@dataclass
class SignerBudget:
    """One signer's adaptive budget of one kind (orders or cancels) over ``SIGNER_WINDOW``."""

    ceiling: int
    limit: float = 0.0
    changed_at: float = 0.0
    warnings: int = 0
    sent: deque[tuple[float, int]] = field(default_factory=deque)
    counted: int = 0  # the weights in ``sent``, kept as a running sum (read on every order)
    # the venue's token bucket for the signer's tier (rate 0: no tier known yet)
    rate: float = 0.0
    burst: float = 0.0
    tokens: float = 0.0
    filled_at: float = 0.0

    def __post_init__(self) -> None:
        self.limit = self.limit or float(self.ceiling)

    def sized(self, now: float, rate: float, burst: float, ceiling: int) -> None:
        """Take the tier's bucket (``rate`` per second up to ``burst``) and window ceiling;
        a backed-off limit stays backed off."""
        self._refill(now)
        self.tokens = burst if not self.rate else min(self.tokens, burst)
        self.rate, self.burst, self.filled_at = rate, burst, now
        backed_off = self.limit < self.ceiling
        self.ceiling = ceiling
        self.limit = min(self.limit, float(ceiling)) if backed_off else float(ceiling)

    def _refill(self, now: float) -> None:
        if self.rate:
            self.tokens = min(self.burst, self.tokens + (now - self.filled_at) * self.rate)
            self.filled_at = now

    def bucket_wait(self, now: float, weight: int) -> float:
        """0 when the bucket holds ``weight`` tokens (a weight above the burst: a full
        bucket), else seconds until it will."""
        if not self.rate:
            return 0.0
        self._refill(now)
        need = min(float(weight), self.burst)
        return 0.0 if self.tokens >= need else max(0.001, (need - self.tokens) / self.rate)

    def charge(self, now: float, tokens: int) -> None:
        """Spend ``tokens`` more after the fact (a cancel-all's cancelled orders): the
        bucket may go below zero, as the venue's does."""
        if self.rate:
            self._refill(now)
            self.tokens -= tokens

    def _recover(self, now: float) -> None:
        # Slow recovery: a quarter more per full window without a warning.
        while self.limit < self.ceiling and now - self.changed_at >= SIGNER_WINDOW:
            self.limit = min(float(self.ceiling), self.limit * RECOVERY + 1)
            self.changed_at += SIGNER_WINDOW

    def used(self, now: float) -> int:
        """Orders counted in the window ending ``now``."""
        sent, start = self.sent, now - SIGNER_WINDOW
        while sent and sent[0][0] <= start:
            self.counted -= sent.popleft()[1]
        return self.counted

    def room(self, now: float, weight: int) -> float:
        """0 when ``weight`` orders fit now, else seconds to wait.

        A batch larger than the whole limit goes alone, once the window is empty.
        """
        self._recover(now)
        bucket = self.bucket_wait(now, weight)
        used = self.used(now)
        if used == 0 or used + weight <= int(self.limit):
            return bucket
        return max(bucket, 0.001, self.sent[0][0] + SIGNER_WINDOW - now)

    def count(self, now: float, weight: int) -> None:
        """Count ``weight`` orders sent at ``now``."""
        self.sent.append((now, weight))
        self.counted += weight
        self.charge(now, weight)

    def warned(self, now: float) -> float:
        """The venue warned: back off below the rate that drew the warning; the new limit."""
        rate = max(self.used(now), MIN_SIGNER_LIMIT)
        self.limit = max(float(MIN_SIGNER_LIMIT), min(self.limit, rate) * BACKOFF)
        self.changed_at = now
        self.warnings += 1
        return self.limit

    @property
    def throttled(self) -> bool:
        """True while the budget is below its ceiling (backed off, recovering)."""
        return self.limit < self.ceiling


class RateBudgets:
    """This process's budgets, one per family; safe from threads (and trio tasks)."""

    def __init__(self, share: float = 1.0, families: tuple[Family, ...] = FAMILIES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not 0 < share <= 1:
            raise ValueError("share must be in (0, 1]")
        self._families = families
        self._share = share
        self._clock = clock
        self._lock = threading.Lock()
        self._budgets: dict[str, _Budget] = {}
        for family in families:
            if family.name not in self._budgets:
                scaled = tuple(Window(max(1, int(w.limit * share)), w.seconds)
                               for w in family.windows)
                self._budgets[family.name] = _Budget(scaled)
        self._signers: dict[tuple[str, str], SignerBudget] = {}
        self._tiers: dict[str, tuple[Tier | None, float]] = {}  # signer -> (tier, asked at)

    def take(self, api: str, method: str, path: str, signer: str | None = None,
             weight: int = 1) -> float:
        """Count a request now (answers 0), or the seconds to wait before asking again.

        ``signer`` (the L2 address) and ``weight`` (orders in a batch) feed the signer's
        adaptive budget when the request is an order or a cancel.
        """
        family = family_of(api, method, path, self._families)
        if family is None:
            return 0.0
        with self._lock:
            now = self._clock()
            budget = self._budgets[family.name]
            own = self._signer_budget(signer, family.name)[1]
            wait = max(budget.room(now), own.room(now, weight) if own is not None else 0.0)
            if wait > 0:
                return wait
            budget.count(now)
            if own is not None:
                own.count(now, weight)
            return 0.0

    def room(self, api: str, method: str, path: str) -> float:
        """Seconds before one more request of this family may go (0: now), counting
        nothing: a caller that must not wait asks first."""
        family = family_of(api, method, path, self._families)
        if family is None:
            return 0.0
        with self._lock:
            return self._budgets[family.name].room(self._clock())

    def _signer_budget(self, signer: str | None, family: str
                       ) -> tuple[str, SignerBudget | None]:
        """(kind, the signer's budget of it); ("", None) for a request without one."""
        if not signer:
            return "", None
        for kind, families, _ceiling in SIGNER_KINDS:
            if family in families:
                return kind, self._budget_of(signer.lower(), kind)
        return "", None

    def _budget_of(self, signer: str, kind: str) -> SignerBudget:
        """The signer's budget of ``kind`` (lower-case signer), made on first use and sized
        by its tier when the venue named one."""
        budget = self._signers.get((signer, kind))
        if budget is None:
            ceiling = next(c for k, _, c in SIGNER_KINDS if k == kind)
            budget = self._signers[(signer, kind)] = SignerBudget(
                max(1, int(ceiling * self._share)))
            tier = self._tiers.get(signer, (None, 0.0))[0]
            if tier is not None:
                self._size(budget, kind, tier)
        return budget

    def _size(self, budget: SignerBudget, kind: str, tier: Tier) -> None:
        # TIER_HEADROOM below the venue's figures: our bucket is debited when a request
        # leaves and the venue's when it arrives, so arrival jitter must never find the
        # venue's bucket emptier than ours (a refused order is not sent again).
        scale = self._share * TIER_HEADROOM
        rate, burst = tier.bucket(kind)
        family_ceiling = next(c for k, _, c in SIGNER_KINDS if k == kind)
        ceiling = max(1, int(min(family_ceiling * self._share, rate * SIGNER_WINDOW * scale)))
        budget.sized(self._clock(), max(1.0, rate * scale), max(1.0, float(int(burst * scale))),
                     ceiling)

    def tier_due(self, signer: str | None) -> bool:
        """Whether the signer's tier is to be asked now: never asked, or asked
        ``TIER_REFRESH_SECONDS`` ago (the venue refreshes tiers every 3 hours)."""
        if not signer:
            return False
        with self._lock:
            asked = self._tiers.get(signer.lower())
            return asked is None or self._clock() - asked[1] >= TIER_REFRESH_SECONDS

    def set_tier(self, signer: str, tier: Tier | None) -> None:
        """The venue named ``signer``'s tier (None: it could not say; the last one known
        stays, and it is asked again at the next refresh): both budgets take its size."""
        key = signer.lower()
        with self._lock:
            known = tier or self._tiers.get(key, (None, 0.0))[0]
            self._tiers[key] = (known, self._clock())
            if known is not None:
                for kind, _, _ in SIGNER_KINDS:
                    self._size(self._budget_of(key, kind), kind, known)

    def tiers(self) -> dict[str, str]:
        """Each signer's tier as the venue last named it: {signer: name}."""
        with self._lock:
            return {signer: tier.name for signer, (tier, _) in self._tiers.items()
                    if tier is not None}

    def charge(self, api: str, method: str, path: str, signer: str | None,
               tokens: int) -> None:
        """Spend ``tokens`` more of the signer's budget after the answer (a cancel-all's
        cancelled orders, one token each: ACCOUNTS.md §12)."""
        family = family_of(api, method, path, self._families)
        if family is None or tokens <= 0:
            return
        with self._lock:
            budget = self._signer_budget(signer, family.name)[1]
            if budget is not None:
                budget.charge(self._clock(), tokens)

    def cancel_bucket(self, signer: str) -> tuple[float, int]:
        """(tokens now, burst) of the signer's cancel bucket, at the tightest tier until
        the venue names one: what one cancel request may cost without going below zero."""
        with self._lock:
            budget = self._budget_of(signer.lower(), "cancels")
            if not budget.rate:
                self._size(budget, "cancels", DEFAULT_TIER)
            budget._refill(self._clock())
            return budget.tokens, int(budget.burst)

    def warned(self, api: str, method: str, path: str, signer: str | None
               ) -> tuple[str, float] | None:
        """The venue warned ``signer`` on this request: back its budget off.

        Answers (kind, new limit per window), or None when the request has no signer budget.
        """
        family = family_of(api, method, path, self._families)
        if family is None:
            return None
        with self._lock:
            kind, budget = self._signer_budget(signer, family.name)
            if budget is None:
                return None
            return kind, budget.warned(self._clock())

    def throttled(self) -> dict[str, dict[str, float]]:
        """Signers whose budget is backed off now: {signer: {kind: limit per window}}."""
        with self._lock:
            now = self._clock()
            found: dict[str, dict[str, float]] = {}
            for (signer, kind), budget in self._signers.items():
                budget._recover(now)
                if budget.throttled:
                    found.setdefault(signer, {})[kind] = round(budget.limit, 1)
            return found

    def lowest(self) -> dict[str, float]:
        """Per kind, the lowest signer limit now, recovery included (the ceiling when no
        signer is backed off): what the metrics show."""
        with self._lock:
            now = self._clock()
            found = {kind: float(max(1, int(ceiling * self._share)))
                     for kind, _, ceiling in SIGNER_KINDS}
            for (_, kind), budget in self._signers.items():
                budget._recover(now)
                found[kind] = min(found[kind], round(budget.limit, 1))
            return found

    def signer_limit(self, signer: str, kind: str) -> float | None:
        """The signer's current limit of ``kind`` per window (None: never used)."""
        with self._lock:
            budget = self._signers.get((signer.lower(), kind))
            if budget is None:
                return None
            budget._recover(self._clock())
            return budget.limit

    def used(self, name: str) -> int:
        """Requests of family ``name`` counted in its shortest window (tests, metrics)."""
        with self._lock:
            budget = self._budgets[name]
            now = self._clock()
            window, sent = budget.windows[0], budget.sent[0]
            return sum(1 for t in sent if t > now - window.seconds)


__all__ = ["FAMILIES", "Family", "RateBudgets", "SignerBudget", "Window", "family_of"]
