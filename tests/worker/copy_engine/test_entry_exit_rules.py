"""Issue 45's rules end to end: the engine against the sandbox venue (real HTTP, RTDS, Redis,
the database): a whale scaling in ten times, a partial sell under each sell mode, the price
bands taking the coin flips a single limit skips, the cooldown and max open positions."""

from __future__ import annotations

import json
from decimal import Decimal

from schemas.rule_fields import DEFAULT_BANDS
from tests.worker.copy_engine.conftest import inject, intents_of, owned, settled, wait_for


def _copied(config) -> list:
    return [i for i in intents_of(config) if i.status != "skipped"]


def test_a_whale_scaling_in_ten_times_against_each_entry_policy(run_engines, make_config,
                                                                trader, market, target,
                                                                venue_control):
    every = make_config(trader.user, target)
    first = make_config(trader.user, target, entry_policy="first_entry_only")
    three = make_config(trader.user, target, entry_policy="max_adds", max_adds_count=3)

    async def scenario(engines):
        await owned(engines[0], target)
        for count in range(1, 11):
            await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
            for config in (every, first, three):
                await wait_for(settled(config, count))

    run_engines(scenario)
    assert [i.status for i in intents_of(every)] == ["filled"] * 10
    assert [(i.status, i.reason) for i in intents_of(first)] == [("filled", None)] + [
        ("skipped", "entry_policy")] * 9
    assert [(i.status, i.reason) for i in intents_of(three)] == [("filled", None)] * 3 + [
        ("skipped", "entry_policy")] * 7
    assert "copies up to 3" in intents_of(three)[3].detail


def test_a_partial_sell_under_each_sell_mode(run_engines, make_config, trader, market, target,
                                             venue_control):
    modes = ("mirror", "same_percentage", "sell_all", "manual")
    configs = {mode: make_config(trader.user, target, sell_mode=mode) for mode in modes}

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "40", "0.5")
        for config in configs.values():
            await wait_for(settled(config, 1))
        await inject(venue_control, target, market.yes, "SELL", "10", "0.5")  # a quarter
        for config in configs.values():
            await wait_for(settled(config, 2))

    run_engines(scenario)
    sales = {mode: intents_of(config)[1] for mode, config in configs.items()}
    assert all(intents_of(c)[0].filled_size == Decimal(40) for c in configs.values())
    assert (sales["mirror"].status, sales["mirror"].size) == ("filled", Decimal(10))
    assert (sales["same_percentage"].status, sales["same_percentage"].size) == (
        "filled", Decimal(10))
    assert "from 40.00 to 30.00 shares" in sales["same_percentage"].detail
    assert (sales["sell_all"].status, sales["sell_all"].size) == ("filled", Decimal(40))
    assert (sales["manual"].status, sales["manual"].reason) == ("skipped", "sells_manual")


def test_the_bands_take_the_coin_flips_the_single_limit_skips(run_engines, make_config,
                                                              trader, market, target,
                                                              venue_control):
    # The whale's 0.49 against the house's 0.51 ask: 408 bps, over a single 200 bps limit,
    # within the default bands' 450 bps around 0.50.
    single = make_config(trader.user, target, price_deviation_bps=200)
    banded = make_config(trader.user, target, price_deviation_bps=200,
                         price_deviation_bands=json.dumps(DEFAULT_BANDS))

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.49")
        for config in (single, banded):
            await wait_for(settled(config, 1))

    run_engines(scenario)
    [skipped] = intents_of(single)
    assert (skipped.status, skipped.reason) == ("skipped", "price_deviation")
    [copied] = intents_of(banded)
    assert copied.status == "filled", copied.detail
    assert copied.price == Decimal("0.51")  # 0.49 + 450 bps, to the tick


def test_a_market_cooldown_and_max_open_positions(run_engines, make_config, trader, market,
                                                  target, venue_control):
    cooled = make_config(trader.user, target, market_cooldown_seconds=3600)
    one = make_config(trader.user, target, max_open_positions=1)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        for config in (cooled, one):
            await wait_for(settled(config, 1))
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")  # an add
        await inject(venue_control, target, market.no, "BUY", "10", "0.5")  # a new one
        for config in (cooled, one):
            await wait_for(settled(config, 3))

    run_engines(scenario)
    assert [(i.status, i.reason) for i in intents_of(cooled)] == [
        ("filled", None), ("skipped", "market_cooldown"), ("skipped", "market_cooldown")]
    by_token = {(i.token_id, i.status, i.reason) for i in intents_of(one)}
    assert by_token == {(market.yes, "filled", None), (market.no, "skipped",
                                                        "max_open_positions")}
    assert len(_copied(one)) == 2  # the add to the held position followed
