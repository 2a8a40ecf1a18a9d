"""The venue's trading modes over time: restarts (425, then post-only), cancel-only,
disabled, and Cloudflare-style throttling (answers queued for a while).

ACCOUNTS.md §7.4: during a matching-engine restart every order-related CLOB endpoint
answers HTTP 425 with ``Retry-After``; then, for about two minutes, only post-only orders
and cancels are accepted (503 ``post_only_mode``, per order inside ``/orders`` batches).
Cancel-only refuses new orders with 503 but allows cancels; disabled refuses both.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

OPEN = "open"
RESTARTING = "restarting"
POST_ONLY = "post_only"
CANCEL_ONLY = "cancel_only"
DISABLED = "disabled"
MODES = (OPEN, RESTARTING, POST_ONLY, CANCEL_ONLY, DISABLED)

# The venue's own texts (ACCOUNTS.md §7.4, docs error codes, ts-sdk trading-restriction.ts).
ERR_POST_ONLY = "post-only mode: only post-only orders and cancels are allowed"
ERR_CANCEL_ONLY = ("Trading is currently cancel-only. New orders are not accepted, but "
                   "cancels are allowed.")
ERR_DISABLED = "Trading is currently disabled. Check polymarket.com for updates"
ERR_RESTARTING = "Too Early"

# Order-related CLOB paths (below the /clob mount): placing, cancelling, reading orders.
PLACING = ("/order", "/orders")
CANCELLING = ("/order", "/orders", "/cancel-all", "/cancel-market-orders")
ORDER_RELATED = ("/order", "/orders", "/cancel-all", "/cancel-market-orders", "/data/order",
                 "/data/orders", "/data/trades", "/v1/heartbeats")


@dataclass(frozen=True)
class Refusal:
    """An answer the mode gives instead of serving: status, JSON body, Retry-After."""

    status: int
    body: dict
    retry_after: int | None


@dataclass
class _Phase:
    mode: str
    until: float | None  # clock time it ends (None: until switched)
    retry_after: int | None = None


class VenueModes:
    """The scheduled modes (a restart is two phases) and the throttle, by the venue's clock."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._phases: list[_Phase] = []
        self._throttle: tuple[float, float, str] | None = None  # delay, until, path prefix

    def reset(self) -> None:
        """Back to open, unthrottled."""
        with self._lock:
            self._phases = []
            self._throttle = None

    def restart(self, seconds: float, post_only_seconds: float, retry_after: int = 1) -> None:
        """A restart now: 425 for ``seconds``, then post-only for ``post_only_seconds``."""
        now = self._clock()
        with self._lock:
            self._phases = [_Phase(RESTARTING, now + seconds, retry_after),
                            _Phase(POST_ONLY, now + seconds + post_only_seconds,
                                   max(1, int(post_only_seconds)))]

    def set(self, mode: str, seconds: float | None = None,
            retry_after: int | None = None) -> None:
        """Switch to ``mode`` (for ``seconds``, else until switched again)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {list(MODES)}")
        until = None if seconds is None else self._clock() + seconds
        with self._lock:
            self._phases = [] if mode == OPEN else [_Phase(mode, until, retry_after)]

    def throttle(self, delay: float, seconds: float, path: str = "/clob") -> None:
        """Hold every answer under ``path`` for ``delay`` s during the next ``seconds``."""
        with self._lock:
            self._throttle = (delay, self._clock() + seconds, path) if delay > 0 else None

    def _current(self) -> tuple[_Phase | None, float]:
        now = self._clock()
        with self._lock:
            while self._phases and self._phases[0].until is not None \
                    and self._phases[0].until <= now:
                self._phases.pop(0)
            return (self._phases[0] if self._phases else None), now

    def describe(self) -> dict:
        """The current mode, seconds left and the throttle, for the control API."""
        phase, now = self._current()
        throttle = self._throttle
        return {
            "mode": phase.mode if phase else OPEN,
            "seconds_left": (None if phase is None or phase.until is None
                             else f"{phase.until - now:.3f}"),
            "throttle": ({"delay": str(throttle[0]), "path": throttle[2],
                          "seconds_left": f"{throttle[1] - now:.3f}"}
                         if throttle and throttle[1] > now else None),
        }

    def throttle_delay(self, path: str) -> float:
        """How long to hold an answer to ``path`` now (0: not throttled)."""
        throttle = self._throttle
        if throttle is None:
            return 0.0
        delay, until, prefix = throttle
        return delay if self._clock() < until and path.startswith(prefix) else 0.0

    def _retry_after(self, phase: _Phase, now: float) -> int:
        if phase.retry_after is not None:
            return phase.retry_after
        return max(1, int((phase.until or now + 60) - now + 0.999))

    def gate(self, path: str, method: str, body: bytes) -> Refusal | None:
        """The refusal a CLOB request (``path`` below the mount) meets now, if any.

        A post-only batch (``POST /orders``) passes: its orders are refused one by one
        (``order_refusal``).
        """
        phase, now = self._current()
        if phase is None:
            return None
        retry = self._retry_after(phase, now)
        method = method.upper()
        placing = method == "POST" and path in PLACING
        cancelling = method == "DELETE" and path in CANCELLING
        if phase.mode == RESTARTING and path in ORDER_RELATED:
            return Refusal(425, {"error": ERR_RESTARTING}, retry)
        if phase.mode == DISABLED and (placing or cancelling):
            return Refusal(503, {"error": ERR_DISABLED}, None)
        if phase.mode == CANCEL_ONLY and placing:
            return Refusal(503, {"error": ERR_CANCEL_ONLY, "retry_after_seconds": retry},
                           retry)
        if phase.mode == POST_ONLY and placing and path == "/order" \
                and not _post_only(body):
            return Refusal(503, post_only_body(retry), retry)
        return None

    def order_refusal(self, envelope: object) -> str | None:
        """Why one order of a batch is refused now (post-only mode), or None."""
        phase, _ = self._current()
        if phase is None or phase.mode != POST_ONLY:
            return None
        if isinstance(envelope, dict) and envelope.get("postOnly") is True:
            return None
        return ERR_POST_ONLY


def post_only_body(retry: int) -> dict:
    """The venue's post-only refusal body."""
    return {"error": ERR_POST_ONLY, "code": "post_only_mode", "retry_after_seconds": retry}


def _post_only(body: bytes) -> bool:
    try:
        envelope = json.loads(body or b"null")
    except ValueError:
        return False
    return isinstance(envelope, dict) and envelope.get("postOnly") is True
