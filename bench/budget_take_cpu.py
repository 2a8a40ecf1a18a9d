"""CPU per ``RateBudgets.take`` of one ``POST /order`` while the signer's window is full.

Every order takes a slot of its family's budget and of its signer's (``venue.budgets``);
the signer's check reads how many orders the last 10 s held. This prints µs of this
thread's CPU per call at steady state (one order in, the oldest out) with ``N`` orders in
the signer's window: 10 (a quiet copier), 170 (``bench/order_post_cpu.py``'s signers) and
3,000 (near the per-signer ceiling of 3,500 per 10 s).

    .venv/bin/python bench/budget_take_cpu.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from venue.budgets import RateBudgets

CALLS = 20000


def per_call(held: int) -> float:
    """µs of CPU per take with ``held`` orders in the signer's window."""
    now = [0.0]
    budgets = RateBudgets(clock=lambda: now[0])
    step = 9.0 / held
    for _ in range(held):
        now[0] += step
        assert budgets.take("clob", "POST", "/order", "0xAbC", 1) == 0
    start = time.thread_time()
    for _ in range(CALLS):
        now[0] += step
        budgets.take("clob", "POST", "/order", "0xAbC", 1)
    return (time.thread_time() - start) / CALLS * 1e6


if __name__ == "__main__":
    for held in (10, 170, 3000):
        print(f"{held:5d} orders in the window: {per_call(held):6.2f} µs per take")
