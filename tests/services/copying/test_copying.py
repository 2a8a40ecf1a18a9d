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


# -- issue 27's rules -------------------------------------------------------------------

def rules(**changes) -> CopyRules:
    return dataclasses.replace(RULES, blocked_categories=frozenset(), **changes)


def test_fixed_usdc_spends_a_fixed_amount_per_copy() -> None:
    decision = copying.decide(rules(sizing_mode="fixed_usdc", fixed_usdc=D("5.20")),
                              fill(size="1000"), MARKET, Holding())
    assert decision.copies and decision.size == D("10.00")  # 5.20 / worst price 0.52
    assert decision.usdc <= D("5.20")


def test_proportional_sizes_by_our_balance_over_the_target_value() -> None:
    ctx = copying.CopyContext(balance_usdc=D(500), target_value_usdc=D(10000))
    decision = copying.decide(rules(sizing_mode="proportional", size_multiplier=D(2)),
                              fill(size="200"), MARKET, Holding(), context=ctx)
    assert decision.size == D("20.00")  # 200 x 500/10000 x 2
    unknown = copying.decide(rules(sizing_mode="proportional"), fill(size="200"), MARKET,
                             Holding())
    assert unknown.reason == copying.BELOW_MIN_SIZE and "portfolio value" in unknown.detail


def test_max_trade_cuts_and_min_trade_skips_or_rounds_up() -> None:
    cut = copying.decide(rules(max_trade_usdc=D("5.2")), fill(size="400"), MARKET, Holding())
    assert cut.size == D("10.00") and "max per trade of 5.20 pUSD" in cut.detail
    small = copying.decide(rules(min_trade_usdc=D(10)), fill(size="20"), MARKET, Holding())
    assert small.reason == copying.BELOW_MIN_TRADE  # 10 shares x 0.52 = 5.2 pUSD
    rounded = copying.decide(rules(min_trade_usdc=D(10), round_up_to_min=True),
                             fill(size="20"), MARKET, Holding())
    assert rounded.copies and rounded.size == D("19.24")  # 10 / 0.52, rounded up
    # Never past a cap: with 6 pUSD of headroom left, rounding up to 10 is refused.
    capped = copying.decide(rules(min_trade_usdc=D(10), round_up_to_min=True),
                            fill(size="20"), MARKET, Holding(D(100), D(94)))
    assert capped.reason == copying.BELOW_MIN_TRADE and "rounding up" in capped.detail


def test_small_target_trades_are_ignored_on_both_sides() -> None:
    rule = rules(min_target_trade_usdc=D(25))
    assert copying.decide(rule, fill(size="40"), MARKET, Holding()).reason == \
        copying.BELOW_MIN_TARGET_TRADE  # 40 x 0.50 = 20 pUSD
    assert copying.decide(rule, fill("SELL", size="40", price="0.49"), MARKET,
                          Holding(D(50), D(25))).reason == copying.BELOW_MIN_TARGET_TRADE
    assert copying.decide(rule, fill(size="60"), MARKET, Holding()).copies


def test_the_odds_band_applies_to_buys_only() -> None:
    band = rules(min_price=D("0.6"), max_price=D("0.9"))
    assert copying.decide(band, fill(), MARKET, Holding()).reason == copying.PRICE_OUT_OF_RANGE
    sell = copying.decide(band, fill("SELL", price="0.49"), MARKET, Holding(D(50), D(25)))
    assert sell.copies  # a position can always be left
    inside = rules(min_price=D("0.5"), max_price=D("0.51"))
    assert copying.decide(inside, fill(), MARKET, Holding()).copies


def test_buys_and_sells_can_be_switched_off() -> None:
    assert copying.decide(rules(copy_buys=False), fill(), MARKET, Holding()).reason == \
        copying.BUYS_DISABLED
    assert copying.decide(rules(copy_sells=False), fill("SELL", price="0.49"), MARKET,
                          Holding(D(50), D(25))).reason == copying.SELLS_DISABLED


def test_budgets_cut_then_skip_and_sells_give_back() -> None:
    rule = rules(daily_budget_usdc=D(10), total_budget_usdc=D(100))
    ctx = copying.CopyContext(spent_today_usdc=D("5.2"), spent_total_usdc=D(20))
    cut = copying.decide(rule, fill(size="40"), MARKET, Holding(), context=ctx)
    assert cut.size == D("9.23") and "by the daily budget" in cut.detail  # 4.8 left / 0.52
    spent = copying.CopyContext(spent_today_usdc=D(8), spent_total_usdc=D(20))
    assert copying.decide(rule, fill(), MARKET, Holding(), context=spent).reason == \
        copying.DAILY_BUDGET_EXHAUSTED
    total = copying.CopyContext(spent_today_usdc=D(0), spent_total_usdc=D(99))
    assert copying.decide(rule, fill(), MARKET, Holding(), context=total).reason == \
        copying.TOTAL_BUDGET_EXHAUSTED
    given_back = copying.CopyContext(spent_today_usdc=D(-5), spent_total_usdc=D(20))
    assert copying.decide(rule, fill(size="40"), MARKET, Holding(),
                          context=given_back).size == D("20.00")  # 15 left: not cut


def test_the_users_exposure_limit_caps_buys() -> None:
    rule = rules(max_total_exposure_usdc=D(50))
    full = copying.CopyContext(user_exposure_usdc=D(48))
    assert copying.decide(rule, fill(), MARKET, Holding(), context=full).reason == \
        copying.EXPOSURE_LIMIT
    room = copying.CopyContext(user_exposure_usdc=D(45))
    assert copying.decide(rule, fill(), MARKET, Holding(), context=room).size == D("9.61")


def test_keyword_filters_match_the_question_case_insensitively() -> None:
    market = dataclasses.replace(MARKET, question="Will the FED cut rates in June?")
    excluded = rules(exclude_keywords=("fed",))
    assert copying.decide(excluded, fill(), market, Holding()).reason == \
        copying.KEYWORD_EXCLUDED
    included = rules(include_keywords=("election", "bitcoin"))
    assert copying.decide(included, fill(), market, Holding()).reason == \
        copying.KEYWORD_NOT_INCLUDED
    assert copying.decide(rules(include_keywords=("rates",)), fill(), market,
                          Holding()).copies


def test_markets_ending_soon_skip_buys_and_exit_before_the_end() -> None:
    market = dataclasses.replace(MARKET, end_ts=1_000_000 + 3 * 3600)
    ctx = copying.CopyContext(now=1_000_000)
    soon = rules(skip_if_ends_within_hours=D(4))
    assert copying.decide(soon, fill(), market, Holding(), context=ctx).reason == \
        copying.MARKET_ENDS_SOON
    assert copying.decide(rules(skip_if_ends_within_hours=D(2)), fill(), market, Holding(),
                          context=ctx).copies
    assert copying.decide(soon, fill("SELL", price="0.49"), market, Holding(D(50), D(25)),
                          context=ctx).copies
    assert copying.exit_before_end(rules(exit_hours_before_end=D(3)), market, 1_000_000)
    assert not copying.exit_before_end(rules(exit_hours_before_end=D(2)), market, 1_000_000)


def test_inverse_copies_the_other_outcome_at_the_complement_price() -> None:
    target = fill(size="40", price="0.50", token="yes")
    flipped = copying.inverse_fill(target, "no")
    assert (flipped.token_id, flipped.price, flipped.side) == ("no", D("0.50"), "BUY")
    assert flipped.value_usdc == D(20) and flipped.outcome_index == 0
    decision = copying.decide(RULES, flipped, MARKET, Holding())
    assert decision.copies and decision.token_id == "no" and decision.side == "BUY"
    cheap = copying.inverse_fill(fill(size="40", price="0.30"), "no")
    assert cheap.price == D("0.70")


def test_a_sell_that_would_leave_dust_sells_everything() -> None:
    held = Holding(shares=D("12"), cost_usdc=D("6"))
    # The target sold 60% of its position: 7.2 of our 12 would leave 4.8 < 5 minimum.
    decision = copying.decide(RULES, fill("SELL", size="60", price="0.49"), MARKET, held,
                              target_position_after=D(40))
    assert decision.size == D(12) and "unsellable dust" in decision.detail
    half = copying.decide(RULES, fill("SELL", size="50", price="0.49"),
                          MARKET, Holding(D(20), D(10)), target_position_after=D(50))
    assert half.size == D(10) and "dust" not in half.detail


def test_an_open_breaker_skips_until_retry_at() -> None:
    closed_at = copying.CopyContext(now=100, breaker_retry_at=160)
    assert copying.decide(RULES, fill(), MARKET, Holding(), context=closed_at).reason == \
        copying.BREAKER_OPEN
    later = copying.CopyContext(now=160, breaker_retry_at=160)
    assert copying.decide(RULES, fill(), MARKET, Holding(), context=later).copies


def test_paused_buys_skip_with_the_pause_reason_and_sales_still_follow() -> None:
    paused = copying.CopyContext(now=100, buys_paused=copying.STOP_UNVERIFIED)
    buy = copying.decide(RULES, fill(), MARKET, Holding(), context=paused)
    assert (buy.action, buy.reason) == ("skip", "stop_unverified")
    assert "could not value a held position" in buy.detail
    sale = copying.decide(RULES, fill("SELL", size="20", price="0.49"), MARKET,
                          Holding(D(20), D(10)), context=paused)
    assert sale.copies and sale.size == D(20)


def test_the_breaker_trips_after_the_limit_and_backs_off() -> None:
    state = (0, 0)
    for _ in range(4):
        failures, trips, pause = copying.breaker_after(*state, 5, failed=True)
        assert pause is None
        state = (failures, trips)
    failures, trips, pause = copying.breaker_after(*state, 5, failed=True)
    assert (failures, trips, pause) == (5, 1, 60)
    assert copying.breaker_after(failures, trips, 5, failed=True)[2] == 300  # retry failed
    assert copying.breaker_after(6, 2, 5, failed=True)[2] == 1800
    assert copying.breaker_after(7, 3, 5, failed=True)[2] == 1800  # stays at 30 min
    assert copying.breaker_after(7, 3, 5, failed=False) == (0, 0, None)


def test_loss_and_drawdown_stops() -> None:
    loss = rules(loss_stop_usdc=D(20))
    assert copying.stop_signal(loss, D("-19.99"), D(0), D(100)) is None
    assert copying.stop_signal(loss, D(-20), D(0), D(100))[0] == copying.LOSS_STOP
    drawdown = rules(max_drawdown_bps=1000)  # 10%
    # Peak +20 with 80 in play: capital 100; falling to +11 is 9%, to +10 is 10%.
    assert copying.stop_signal(drawdown, D(11), D(20), D(80)) is None
    assert copying.stop_signal(drawdown, D(10), D(20), D(80))[0] == copying.DRAWDOWN_STOP


def test_a_closing_sell_is_guarded_by_the_deviation_rule() -> None:
    decision = copying.closing_sell(RULES, "111", Holding(D(30), D(15)), MARKET, "loss_stop")
    assert decision.copies and decision.size == D(30)
    assert decision.price == D("0.47")  # 0.49 bid less 5%, rounded up to the tick
    empty = dataclasses.replace(MARKET, best_bid=None)
    assert copying.closing_sell(RULES, "111", Holding(D(30), D(15)), empty,
                                "loss_stop").reason == copying.NO_LIQUIDITY
