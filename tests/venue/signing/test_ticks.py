"""All six tick sizes: prices snap onto whole ticks, and order amounts equal the official
SDK's (``polymarket-client``) for every tick's rounding config (ACCOUNTS.md §7.5)."""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import pytest

from services.trading.order_plan import protective_limit
from tests.sdk_env import sdk_result
from venue.models import ALLOWED_TICK_SIZES, Side
from venue.signing import (
    check_price,
    limit_order_amounts,
    market_order_amounts,
    round_price_to_tick,
    snap_to_tick,
)

D = Decimal
TICKS = [D("0.1"), D("0.01"), D("0.005"), D("0.0025"), D("0.001"), D("0.0001")]

SDK_AMOUNTS = """
from decimal import Decimal as D
from polymarket._internal.actions.orders.limit import _compute_limit_order_amounts
from polymarket._internal.actions.orders.market import _compute_market_order_amounts
from polymarket._internal.actions.orders.context import (
    resolve_rounding_config, validate_price_on_tick_grid)
from polymarket.errors import UserInputError
result = []
for case in payload:
    tick = D(case["tick"])
    config = resolve_rounding_config(tick)
    try:
        validate_price_on_tick_grid(D(case["price"]), tick, "price")
        on_grid = True
    except UserInputError:
        on_grid = False
    limit = (list(_compute_limit_order_amounts(price=D(case["price"]), size=D(case["size"]),
                                               side=case["side"], tick_size=tick))
             if on_grid else None)
    market = list(_compute_market_order_amounts(amount=D(case["size"]), price=D(case["price"]),
                                                side=case["side"], tick_size=tick))
    result.append({"config": [config.price, config.size, config.amount], "on_grid": on_grid,
                   "limit": limit, "market": market})
"""


def test_the_venue_allows_exactly_the_six_tick_sizes() -> None:
    assert frozenset(TICKS) == ALLOWED_TICK_SIZES


def _cases() -> list[dict]:
    prices = {D("0.1"): ["0.3", "0.9"], D("0.01"): ["0.45", "0.99", "0.455"],
              D("0.005"): ["0.535", "0.005", "0.995", "0.537"],
              D("0.0025"): ["0.4975", "0.0025", "0.5001"],
              D("0.001"): ["0.537", "0.999"], D("0.0001"): ["0.5371", "0.0001"]}
    return [{"tick": str(tick), "price": price, "size": size, "side": side}
            for tick, texts in prices.items() for price in texts
            for size in ("10", "7.33", "123.456") for side in ("BUY", "SELL")]


def test_amounts_and_grid_equal_the_sdk_for_every_tick() -> None:
    cases = _cases()
    theirs = sdk_result(SDK_AMOUNTS, cases)
    for case, sdk in zip(cases, theirs, strict=True):
        tick, price, size = D(case["tick"]), D(case["price"]), D(case["size"])
        decimals = -tick.normalize().as_tuple().exponent
        assert sdk["config"] == [decimals, 2, decimals + 2]
        try:
            check_price(price, tick)
            ours_on_grid = True
        except ValueError:
            ours_on_grid = False
        assert ours_on_grid == sdk["on_grid"], case
        if ours_on_grid:
            maker, taker, _ = limit_order_amounts(case["side"], price, size, tick)
            assert [maker, taker] == sdk["limit"], case
            maker, taker, _ = market_order_amounts(case["side"], size, price, tick)
            assert [maker, taker] == sdk["market"], case


@pytest.mark.parametrize("tick", TICKS)
def test_every_rounding_lands_on_whole_ticks_within_the_band(tick: Decimal) -> None:
    for raw in ("0.0001", "0.13337", "0.5", "0.53799", "0.99991"):
        price = D(raw)
        for side in ("BUY", "SELL"):
            rounded = round_price_to_tick(price, tick, side)
            check_price(rounded, tick)  # on the grid, within [tick, 1 - tick]
        for rounding in (ROUND_FLOOR, ROUND_CEILING):
            assert snap_to_tick(price, tick, rounding) % tick == 0
        for side in Side:
            check_price(protective_limit(price.max(tick).min(1 - tick), side, tick), tick)
        # A market order's worst price is floored onto whole ticks, never refused.
        if tick <= price <= 1 - tick:
            _, _, worst = market_order_amounts("BUY", D("10"), price, tick)
            assert worst % tick == 0 and worst <= price


def test_half_cent_ticks_round_onto_their_own_grid() -> None:
    # Three decimals are not the 0.005 grid: 0.537 is off it (the bug this fixes).
    assert round_price_to_tick(D("0.537"), D("0.005"), "BUY") == D("0.535")
    assert round_price_to_tick(D("0.537"), D("0.005"), "SELL") == D("0.540")
    assert round_price_to_tick(D("0.4976"), D("0.0025"), "SELL") == D("0.5000")
    # 3% past the worst price: 0.54899 -> 0.550 (not 0.549), 0.52313 -> 0.5225 (not 0.5231)
    assert protective_limit(D("0.533"), Side.BUY, D("0.005")) == D("0.550")
    assert protective_limit(D("0.5393"), Side.SELL, D("0.0025")) == D("0.5225")
    with pytest.raises(ValueError, match=r"not a multiple of tick size 0\.005"):
        limit_order_amounts("BUY", D("0.537"), D("10"), D("0.005"))
