"""Fault injection: make the next N requests to a path fail or stall."""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass
class FaultRule:
    """Answer `status` (after `delay` seconds) to the next `remaining` matching requests.

    status 0 means: only delay, then serve normally (a slow venue / client timeout).
    ``after``: the venue does the work first and the answer is what gets lost: served
    after ``delay``, replaced by ``status`` (0: the real answer), or, with ``reset``, the
    connection is reset instead of answering.
    """

    path_prefix: str
    remaining: int
    status: int = 500
    delay: float = 0.0
    method: str | None = None
    retry_after: int | None = None
    body: str | None = None
    after: bool = False
    reset: bool = False

    def matches(self, path: str, method: str) -> bool:
        """True when this rule applies to a request."""
        if self.method and self.method.upper() != method.upper():
            return False
        return path.startswith(self.path_prefix)


class FaultBoard:
    """The armed fault rules; each matching request consumes one use of the first rule."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []

    def add(self, rule: FaultRule) -> None:
        """Arm a rule."""
        with self._lock:
            self._rules.append(rule)

    def clear(self) -> None:
        """Disarm every rule."""
        with self._lock:
            self._rules.clear()

    def take(self, path: str, method: str) -> FaultRule | None:
        """Consume and return the first rule that matches, if any."""
        if not self._rules:  # fast path: no lock when nothing is armed
            return None
        with self._lock:
            for rule in self._rules:
                if rule.remaining > 0 and rule.matches(path, method):
                    rule.remaining -= 1
                    if rule.remaining == 0:
                        self._rules.remove(rule)
                    return rule
        return None

    def snapshot(self) -> list[dict]:
        """The armed rules, for the control API."""
        with self._lock:
            return [
                {
                    "path": r.path_prefix, "remaining": r.remaining, "status": r.status,
                    "delay": str(r.delay), "method": r.method, "after": r.after,
                    "reset": r.reset,
                }
                for r in self._rules
            ]
