"""Floor of planning: a market order's amounts in base units from size, worst price and tick.

    .venv/bin/python bench/floors/planning.py
"""

from __future__ import annotations

from decimal import ROUND_DOWN, Decimal

from floor_clock import cpu_ms

TICK, UNIT = Decimal("0.01"), Decimal(1_000_000)
SIZE, WORST, AVAILABLE = Decimal(10), Decimal("0.52"), Decimal(1000)


def plan() -> tuple[int, int]:
    """Maker and taker amounts of a buy (collateral checked against the estimate)."""
    price = WORST.quantize(TICK, rounding=ROUND_DOWN)
    spend = (SIZE * price).quantize(TICK)
    if spend > AVAILABLE:
        raise ValueError("short")
    return int(spend * UNIT), int(SIZE * UNIT)


def measure(copies: int) -> float:
    """ms of CPU per copy order (one plan per copy)."""
    return cpu_ms(plan)


if __name__ == "__main__":
    print(f"plan: {measure(1):.4f} ms per copy")
