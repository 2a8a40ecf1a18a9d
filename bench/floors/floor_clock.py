"""What every floor script shares: CPU per call of a function, best of a few rounds."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def cpu_ms(work: Callable[[], Any], calls: int = 2000, rounds: int = 5) -> float:
    """This thread's CPU per call of ``work``, ms: the best of ``rounds`` (the least
    disturbed by the neighbours: a floor is what the work costs when nothing else does)."""
    work()  # warm: imports, caches, first connection
    best = float("inf")
    for _ in range(rounds):
        started = time.thread_time()
        for _ in range(calls):
            work()
        best = min(best, (time.thread_time() - started) / calls)
    return best * 1000
