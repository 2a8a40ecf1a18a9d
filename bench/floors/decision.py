"""Floor of the decision: one config's rules applied to a fill (size, limits, odds band).

    .venv/bin/python bench/floors/decision.py
"""

from __future__ import annotations

from decimal import Decimal

from floor_clock import cpu_ms

CENT = Decimal("0.01")
MULTIPLIER, CAP, BAND = Decimal("0.5"), Decimal(100000), (Decimal("0.02"), Decimal("0.98"))
SIZE, PRICE = Decimal(20), Decimal("0.5")


def decide() -> dict[str, object] | None:
    """The proportional rule with a cap and an odds band: a draft, or None (a skip)."""
    if not BAND[0] <= PRICE <= BAND[1]:
        return None
    size = (SIZE * MULTIPLIER).quantize(CENT)
    usdc = size * PRICE
    if usdc > CAP:
        size = (CAP / PRICE).quantize(CENT)
    return {"side": "BUY", "size": size, "price": PRICE, "usdc": usdc}


def measure(copies: int) -> float:
    """ms of CPU per copy order (one decision per copy)."""
    return cpu_ms(decide)


if __name__ == "__main__":
    print(f"decide: {measure(1):.4f} ms per copy")
