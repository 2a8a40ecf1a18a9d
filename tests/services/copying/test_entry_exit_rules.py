"""Issue 45's rules in the pure decision: the entry policy, max open positions, sell modes,
the market cooldown and the price deviation bands."""

from __future__ import annotations

import dataclasses
from decimal import Decimal as D

from schemas import rule_fields
from services.copying import mirror
from services.copying.mirror import CopyContext, CopyRules, Holding, MarketView, TargetFill

RULES = CopyRules(size_multiplier=D(1), max_position_usdc=D(1000), price_deviation_bps=200)
MARKET = MarketView(tick_size=D("0.01"), min_order_size=D(5), best_bid=D("0.49"),
                    best_ask=D("0.51"))
HELD = Holding(shares=D(20), cost_usdc=D(10))


def fill(side: str = "BUY", size: str = "20", price: str = "0.50") -> TargetFill:
    return TargetFill(key="k", wallet="0xabc", token_id="7", side=side, size=D(size),
                      price=D(price), timestamp=1, condition_id="0xc")


FLAT = Holding()


def decide(rules: CopyRules, target: TargetFill, holding: Holding = FLAT,
           **context) -> mirror.Decision:
    return mirror.decide(rules, target, MARKET, holding, context=CopyContext(**context))


def test_every_add_copies_a_whale_scaling_in_ten_times():
    for entries in range(10):
        assert decide(RULES, fill(), HELD if entries else Holding(), entries=entries).copies


def test_first_entry_only_copies_the_opening_buy_and_skips_each_add():
    rules = dataclasses.replace(RULES, entry_policy="first_entry_only")
    assert decide(rules, fill()).copies
    added = decide(rules, fill(), HELD, entries=1)
    assert (added.action, added.reason) == ("skip", mirror.ENTRY_POLICY)
    assert "only the first entry" in added.detail
    # A position held from before any count is an open one too.
    assert decide(rules, fill(), HELD, entries=0).reason == mirror.ENTRY_POLICY
    # Sells still follow; once flat, a buy opens a new position.
    assert decide(rules, fill("SELL"), HELD, entries=1).copies


def test_max_adds_copies_the_first_n_buys_the_opening_one_included():
    rules = dataclasses.replace(RULES, entry_policy="max_adds", max_adds_count=3)
    outcomes = [decide(rules, fill(), HELD if n else Holding(), entries=n) for n in range(10)]
    assert [o.copies for o in outcomes] == [True] * 3 + [False] * 7
    assert {o.reason for o in outcomes[3:]} == {mirror.ENTRY_POLICY}
    assert "3 buys into this position were copied" in outcomes[3].detail


def test_max_open_positions_skips_a_new_market_and_lets_adds_follow_the_policy():
    rules = dataclasses.replace(RULES, max_open_positions=2)
    assert decide(rules, fill(), open_positions=1).copies
    full = decide(rules, fill(), open_positions=2)
    assert (full.action, full.reason) == ("skip", mirror.MAX_OPEN_POSITIONS)
    assert decide(rules, fill(), HELD, entries=1, open_positions=2).copies  # an add
    capped = dataclasses.replace(rules, entry_policy="first_entry_only")
    assert decide(capped, fill(), HELD, entries=1, open_positions=2).reason == \
        mirror.ENTRY_POLICY


def test_sell_modes_on_a_partial_sell():
    # The trader sells 25 of its 100 shares (75 left); we hold 20.
    partial = fill("SELL", size="25")
    mirrored = mirror.decide(RULES, partial, MARKET, HELD, target_position_after=D(75))
    assert (mirrored.copies, mirrored.size) == (True, D("5.00"))
    same = dataclasses.replace(RULES, sell_mode="same_percentage")
    # Read before and after: 100 -> 60 (another sale in the same block), 40% sold.
    measured = mirror.decide(same, partial, MARKET, HELD, target_position_after=D(60),
                             target_position_before=D(100))
    assert (measured.copies, measured.size) == (True, D("8.00"))
    assert "from 100.00 to 60.00 shares" in measured.detail
    everything = mirror.decide(dataclasses.replace(RULES, sell_mode="sell_all"), partial,
                               MARKET, HELD, target_position_after=D(75))
    assert (everything.copies, everything.size) == (True, D(20))
    manual = mirror.decide(dataclasses.replace(RULES, sell_mode="manual"), partial, MARKET,
                           HELD, target_position_after=D(75))
    assert (manual.action, manual.reason) == ("skip", mirror.SELLS_MANUAL)
    # Manual exits leave buys alone.
    assert decide(dataclasses.replace(RULES, sell_mode="manual"), fill()).copies


def test_market_cooldown_waits_after_our_last_copy_there():
    rules = dataclasses.replace(RULES, market_cooldown_seconds=60)
    waiting = decide(rules, fill(), now=1_000, last_copy_at=970)
    assert (waiting.action, waiting.reason) == ("skip", mirror.MARKET_COOLDOWN)
    assert "30 s ago" in waiting.detail
    assert decide(rules, fill("SELL"), HELD, now=1_000, last_copy_at=970).reason == \
        mirror.MARKET_COOLDOWN
    assert decide(rules, fill(), now=1_060, last_copy_at=1_000).copies
    assert decide(rules, fill(), now=1_000).copies  # no copy there yet


def test_bands_take_the_coin_flip_the_single_limit_skips():
    # The book moved a tick from the trader's 0.49: 204 bps, over the single 200.
    coin_flip = fill(price="0.49")
    skipped = decide(RULES, coin_flip)
    assert (skipped.action, skipped.reason) == ("skip", mirror.PRICE_DEVIATION)
    banded = CopyRules.from_fields({"size_multiplier": D(1), "max_position_usdc": D(1000),
                                    "price_deviation_bps": 200,
                                    "price_deviation_bands": rule_fields.DEFAULT_BANDS})
    taken = decide(banded, coin_flip)
    assert taken.copies and taken.price == D("0.51")  # 0.49 + 450 bps, to the tick
    # A favourite's band stays tight: 0.85 -> 0.88 is 353 bps, over its 200.
    favourite = mirror.decide(banded, fill(price="0.85"),
                              dataclasses.replace(MARKET, best_ask=D("0.88")), Holding())
    assert favourite.reason == mirror.PRICE_DEVIATION
    assert "price deviation bands for prices 0.80-1.00 allows 2 %" in favourite.detail


def test_above_the_last_band_the_single_limit_applies():
    rules = dataclasses.replace(RULES, price_deviation_bps=100,
                                price_deviation_bands=((D("0.3"), 1000),))
    assert mirror.deviation_limit(rules, D("0.2"))[0] == 1000
    assert mirror.deviation_limit(rules, D("0.3"))[0] == 1000
    assert mirror.deviation_limit(rules, D("0.5")) == (100, "price deviation")


def test_the_copyability_replay_honours_the_entry_policy_and_the_cooldown():
    from services.copying import copyability

    facts = {"7": copyability.TokenFacts(token_id="7", market_slug="m", view=MARKET,
                                         history=((0, D("0.50")),))}
    scaling = [dataclasses.replace(fill(), key=f"k{i}", timestamp=100 + 10 * i)
               for i in range(10)]
    first = copyability.replay(scaling, facts, dataclasses.replace(
        RULES, entry_policy="first_entry_only"), 0)
    assert len(first.copies) == 1
    assert first.skips_by_reason() == {mirror.ENTRY_POLICY: 9}
    three = copyability.replay(scaling, facts, dataclasses.replace(
        RULES, entry_policy="max_adds", max_adds_count=3), 0)
    assert len(three.copies) == 3
    cooled = copyability.replay(scaling, facts, dataclasses.replace(
        RULES, market_cooldown_seconds=25), 0)
    # Copies at 100, 130, 160, 190: each 30 s after the last, the two between skipped.
    assert len(cooled.copies) == 4
    assert cooled.skips_by_reason() == {mirror.MARKET_COOLDOWN: 6}
