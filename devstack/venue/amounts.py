"""Amounts as the venue counts them: 6-decimal base units, and their plain texts."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

SCALE = 10**6
# The venue's tick sizes (0.005 and 0.0025 since July 2026, for sports spreads).
TICK_SIZES: tuple[Decimal, ...] = tuple(
    Decimal(t) for t in ("0.1", "0.01", "0.005", "0.0025", "0.001", "0.0001"))
D_SCALE = Decimal(SCALE)


def units(base: int) -> Decimal:
    """Base units (6 decimals) to a Decimal amount."""
    return Decimal(base) / D_SCALE


def to_base(amount: Decimal) -> int:
    """A Decimal amount to base units, half-up."""
    return int((amount * D_SCALE).to_integral_value(ROUND_HALF_UP))


def amount_text(base: int) -> str:
    """Base units as a plain decimal string in units ("1.52", "5")."""
    value = units(base).normalize()
    return format(value, "f")


def plain(value: Decimal) -> str:
    """A Decimal as short plain text for messages."""
    return format(value.normalize(), "f")


def on_tick_grid(price: Decimal, tick: Decimal) -> Decimal:
    """The nearest price that is a whole number of ticks, within [tick, 1 - tick]."""
    snapped = (price / tick).to_integral_value(ROUND_HALF_UP) * tick
    return min(max(snapped, tick), 1 - tick)
