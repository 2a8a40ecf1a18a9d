"""The pure mirroring rules: sizing, caps, guards, proportional sells, exits."""

from __future__ import annotations

import dataclasses
from decimal import Decimal as D

from services.copying import mirror as copying
from services.copying.mirror import CopyRules, Holding, MarketView, TargetFill
from services.trading.holdings import apply_fill
from venue.models import FeeSchedule

RULES = CopyRules(size_multiplier=D("0.5"), max_position_usdc=D("100"),
                  price_deviation_bps=500, blocked_categories=frozenset({"sports"}))
MARKET = MarketView(category="Politics", tick_size=D("0.01"), min_order_size=D(5),
                    best_bid=D("0.49"), best_ask=D("0.51"),
                    categories=frozenset({"politics"}))


def fill(side: str = "BUY", size: str = "40", price: str = "0.50", token: str = "111"
         ) -> TargetFill:
    return TargetFill(key="k", wallet="0xabc", token_id=token, side=side, size=D(size),
                      price=D(price), timestamp=1, outcome_index=1)


def test_buy_mirrors_token_side_and_size() -> None:
    decision = copying.decide(RULES, fill(token="222"), MARKET, Holding())
    assert decision.copies
    assert (decision.token_id, decision.side, decision.size) == ("222", "BUY", D("20.00"))
    assert decision.price == D("0.52")  # 0.50 + 5% = 0.525, rounded down to the tick
    assert decision.usdc == D("10.40")


def test_buy_is_capped_by_position_headroom() -> None:
    held = Holding(shares=D(150), cost_usdc=D("95"))
    decision = copying.decide(RULES, fill(size="400"), MARKET, held)
    assert decision.copies
    assert decision.size == D("9.61")  # 5 pUSD headroom / 0.52
    assert decision.usdc <= D(5)


def test_buy_leaves_room_for_the_taker_fee() -> None:
    held = Holding(shares=D(150), cost_usdc=D("95"))
    fees = FeeSchedule(rate=D("0.07"), exponent=D(1), taker_only=True, rebate_rate=D(0))
    market = dataclasses.replace(MARKET, fees=fees)
    decision = copying.decide(RULES, fill(size="400"), market, held)
    # 5 pUSD headroom / (0.52 + 0.07 x 0.52 x 0.48 per share of fee)
    assert decision.size == D("9.30")  # 9.61 without the fee
    assert decision.size * D("0.52") + fees.taker_fee(decision.size, D("0.52")) <= D(5)
    affordable = copying.decide(RULES, fill(size="400"), market, Holding(),
                                available_usdc=D("5"))
    assert affordable.size == D("9.30")  # the balance too pays the fee


def test_cap_reached_skips() -> None:
    decision = copying.decide(RULES, fill(), MARKET, Holding(D(200), D(100)))
    assert (decision.action, decision.reason) == ("skip", copying.CAP_REACHED)


def test_under_min_size_skips_never_rounds_up() -> None:
    decision = copying.decide(RULES, fill(size="8"), MARKET, Holding())
    assert (decision.action, decision.reason) == ("skip", copying.BELOW_MIN_SIZE)
    tight = Holding(shares=D(190), cost_usdc=D("98"))
    decision = copying.decide(RULES, fill(size="400"), MARKET, tight)
    assert decision.reason == copying.BELOW_MIN_SIZE  # 2 pUSD buys < 5 shares: no round-up


def test_blocked_category_skips() -> None:
    sports = MarketView(category="Sports", best_bid=D("0.49"), best_ask=D("0.51"),
                        categories=frozenset({"sports"}))
    decision = copying.decide(RULES, fill(), sports, Holding())
    assert decision.reason == copying.CATEGORY_BLOCKED


def test_price_guard_both_directions() -> None:
    far = MarketView(best_bid=D("0.55"), best_ask=D("0.56"))
    assert copying.decide(RULES, fill(), far, Holding()).reason == copying.PRICE_DEVIATION
    low = MarketView(best_bid=D("0.40"), best_ask=D("0.41"))
    assert copying.decide(RULES, fill(), low, Holding()).reason == copying.PRICE_DEVIATION
    near = MarketView(best_bid=D("0.50"), best_ask=D("0.52"))
    assert copying.decide(RULES, fill(), near, Holding()).copies


def test_balance_short_skips_or_reduces() -> None:
    decision = copying.decide(RULES, fill(), MARKET, Holding(), available_usdc=D("1"))
    assert decision.reason == copying.INSUFFICIENT_BALANCE
    decision = copying.decide(RULES, fill(), MARKET, Holding(), available_usdc=D("5.2"))
    assert decision.copies and decision.size == D(10)


def test_sell_is_proportional_to_target_share_sold() -> None:
    held = Holding(shares=D(40), cost_usdc=D(20))
    # target held 100, sold 25 (75 left): sell 25% of ours
    decision = copying.decide(RULES, fill("SELL", "25", "0.50"), MARKET, held,
                              target_position_after=D(75))
    assert decision.copies and decision.side == "SELL" and decision.size == D("10.00")
    everything = copying.decide(RULES, fill("SELL", "25", "0.50"), MARKET, held,
                                target_position_after=D(0))
    assert everything.size == D(40)
    assert copying.decide(RULES, fill("SELL"), MARKET, Holding()).reason == copying.NO_POSITION
    small = copying.decide(RULES, fill("SELL", "1", "0.50"), MARKET, held,
                           target_position_after=D(99))
    assert small.reason == copying.BELOW_MIN_SIZE


def test_exits() -> None:
    rules = CopyRules(D(1), D(100), 500, take_profit_bps=2000, stop_loss_bps=1000)
    held = Holding(shares=D(10), cost_usdc=D(5))
    assert copying.exit_signal(rules, held, D("0.61")) == "take_profit"
    assert copying.exit_signal(rules, held, D("0.44")) == "stop_loss"
    assert copying.exit_signal(rules, held, D("0.52")) is None
    exit_decision = copying.decide_exit(rules, "t", held, MarketView(best_bid=D("0.61")))
    assert exit_decision is not None and exit_decision.size == D(10) and exit_decision.copies


def test_apply_fill_average_cost() -> None:
    held, realized = apply_fill(Holding(), "BUY", D(10), D(5))
    held, realized = apply_fill(held, "SELL", D(4), D("2.8"))
    assert held == Holding(D(6), D(3)) and realized == D("0.8")


def test_suggest_multiplier() -> None:
    multiplier, how = copying.suggest_multiplier(D(1000), D(500), D(2000))
    assert multiplier == D("0.1") and "500.00" in how
    capped, how = copying.suggest_multiplier(D(1000), D(10), D(50000))
    assert capped == D("0.01") and "half" in how
