"""Order amounts in base units, computed in Decimal (py-clob-client-v2 rounds with floats).

Prices sit on the market's tick grid; sizes are floored to 2 decimals; pUSD and outcome
shares both have 6 decimals on chain. The figures equal the library's (tests compare them).
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from functools import lru_cache
from typing import NamedTuple

from venue.models import ALLOWED_TICK_SIZES, BUY, SELL

BASE_UNITS = Decimal(10) ** 6  # pUSD and outcome shares both have 6 decimals on chain
SIZE_DECIMALS = 2


@lru_cache(maxsize=64, typed=True)
def _decimals(tick_size: Decimal) -> tuple[int, int]:
    """(price decimals, amount decimals) for a tick: 0.01 -> (2, 4), 0.001 -> (3, 5)..."""
    tick = Decimal(tick_size)
    if tick not in ALLOWED_TICK_SIZES:
        raise ValueError(f"tick size {tick_size} not in {sorted(ALLOWED_TICK_SIZES)}")
    price_decimals = -tick.normalize().as_tuple().exponent  # type: ignore[operator]
    return price_decimals, price_decimals + SIZE_DECIMALS


def _quantize(value: Decimal, decimals: int, rounding: str) -> Decimal:
    return value.quantize(_unit(decimals), rounding)


@lru_cache(maxsize=32)
def _unit(decimals: int) -> Decimal:
    return Decimal(1).scaleb(-decimals)


_SIZE_UNIT = _unit(SIZE_DECIMALS)


class _TickGrid(NamedTuple):
    tick: Decimal
    top: Decimal  # 1 - tick, the highest price
    price_unit: Decimal
    amount_decimals: int
    amount_unit: Decimal
    fine_unit: Decimal  # four more decimals, where a market BUY's taker amount rounds up first


@lru_cache(maxsize=16)
def _tick_grid(tick: Decimal) -> _TickGrid:
    # Once per tick size, not per order; equal ticks (0.01, 0.010) share a grid, so the
    # grid is only compared against, never shown (check_price words the errors).
    price_decimals, amount_decimals = _decimals(tick)
    return _TickGrid(tick, Decimal(1) - tick, _unit(price_decimals), amount_decimals,
                     _unit(amount_decimals), _unit(amount_decimals + 4))


def _base_units(value: Decimal) -> int:
    scaled = value * BASE_UNITS
    if scaled != scaled.to_integral_value():
        raise ValueError(f"{value} has more than 6 decimals")
    return int(scaled)


def checked_side(side: str) -> str:
    """``BUY`` or ``SELL`` from ``side`` in any case; ValueError for anything else."""
    upper = side.upper()
    if upper not in (BUY, SELL):
        raise ValueError(f"side must be BUY or SELL, not {side!r}")
    return upper


def check_price(price: Decimal, tick_size: Decimal) -> None:
    """Raise ValueError unless ``price`` is on the tick grid within [tick, 1 - tick]."""
    tick = Decimal(tick_size)
    _decimals(tick)
    if price % tick != 0:
        raise ValueError(f"price {price} is not a multiple of tick size {tick}")
    if not tick <= price <= Decimal(1) - tick:
        raise ValueError(f"price {price} outside [{tick}, {Decimal(1) - tick}]")


def snap_to_tick(price: Decimal, tick_size: Decimal, rounding: str) -> Decimal:
    """``price`` on the tick grid (a whole number of ticks: 0.005 is not 3 decimals' grid)."""
    tick = Decimal(tick_size)
    price_decimals, _ = _decimals(tick)
    steps = (Decimal(price) / tick).to_integral_value(rounding)
    return (steps * tick).quantize(_unit(price_decimals))


def round_price_to_tick(price: Decimal, tick_size: Decimal, side: str) -> Decimal:
    """Price on the tick grid, rounded against the trader: BUY down, SELL up, then clamped."""
    tick = Decimal(tick_size)
    rounding = ROUND_FLOOR if checked_side(side) == BUY else ROUND_CEILING
    rounded = snap_to_tick(price, tick, rounding)
    return min(max(rounded, tick), Decimal(1) - tick)


def limit_order_amounts(
    side: str, price: Decimal, size: Decimal, tick_size: Decimal
) -> tuple[int, int, Decimal]:
    """(maker base units, taker base units, size used) for ``size`` shares at ``price``.

    BUY pays price x size pUSD for size shares; SELL gives size shares for that pUSD. Size is
    floored to 2 decimals, so the product has at most the tick's amount decimals and is exact.
    """
    check_price(price, tick_size)
    shares = _quantize(Decimal(size), SIZE_DECIMALS, ROUND_FLOOR)
    if shares <= 0:
        raise ValueError(f"size {size} rounds to zero shares")
    collateral = shares * price
    if checked_side(side) == BUY:
        return _base_units(collateral), _base_units(shares), shares
    return _base_units(shares), _base_units(collateral), shares


def market_order_amounts(
    side: str, amount: Decimal, price: Decimal, tick_size: Decimal
) -> tuple[int, int, Decimal]:
    """(maker, taker, price used) for a FOK/FAK market order, as py-clob-client-v2 rounds.

    BUY ``amount`` is pUSD to spend, SELL ``amount`` is shares to sell; ``price`` is the worst
    acceptable price (floored to the tick).
    """
    grid = _tick_grid(Decimal(tick_size))
    worst = Decimal(price).quantize(grid.price_unit, ROUND_FLOOR)
    if worst % grid.tick:  # a tick that is not a power of ten (0.005, 0.0025): whole ticks
        worst = snap_to_tick(worst, grid.tick, ROUND_FLOOR)
    if worst % grid.tick != 0 or not grid.tick <= worst <= grid.top:
        check_price(worst, tick_size)  # raises, with the message of the tick as given
    maker = Decimal(amount).quantize(_SIZE_UNIT, ROUND_FLOOR)
    if maker <= 0:
        raise ValueError(f"amount {amount} rounds to zero")
    if checked_side(side) == BUY:
        taker = maker / worst
        if -taker.as_tuple().exponent > grid.amount_decimals:  # type: ignore[operator]
            taker = taker.quantize(grid.fine_unit, ROUND_CEILING).quantize(
                grid.amount_unit, ROUND_FLOOR)
    else:
        taker = maker * worst
    return _base_units(maker), _base_units(taker), worst
