"""The copy rules speak in words: reasons and decision details name rules by their labels
(never a config field), amounts as money, and a fixed-size copy says why it spends less."""

from __future__ import annotations

import dataclasses
import re
from decimal import Decimal as D

from services.copying import copy_notices, mirror
from services.copying.configs.rules import EDITABLE_FIELDS
from services.copying.mirror import CopyContext, CopyRules, Holding, MarketView, TargetFill
from services.copying.rule_labels import LABELS
from venue.models import FeeSchedule

RULES = CopyRules(size_multiplier=D("0.5"), max_position_usdc=D("100"),
                  price_deviation_bps=500)
MARKET = MarketView(category="Politics", tick_size=D("0.01"), min_order_size=D(5),
                    best_bid=D("0.49"), best_ask=D("0.51"), question="Will it rain?",
                    categories=frozenset({"politics"}))
FIELDS = (*EDITABLE_FIELDS, "max_total_exposure_usdc")
FIELD_NAMES = re.compile(r"\b(" + "|".join(sorted(FIELDS, key=len, reverse=True)) + r")\b")


def fill(size: str = "40", price: str = "0.50", side: str = "BUY") -> TargetFill:
    return TargetFill(key="k", wallet="0xabc", token_id="1", side=side, size=D(size),
                      price=D(price), timestamp=1, outcome_index=1)


def test_every_reason_reads_without_a_field_name():
    assert set(LABELS) >= set(EDITABLE_FIELDS)  # every editable rule has a label
    for code, text in mirror.REASONS.items():
        assert not FIELD_NAMES.search(text), (code, text)
        assert not FIELD_NAMES.search(copy_notices.readable(code)), code
    assert copy_notices.readable(mirror.DAILY_BUDGET_EXHAUSTED) == \
        "the config's daily budget is spent for this UTC day"


def test_decision_details_name_rules_by_label_and_amounts_as_money():
    def decide(holding: Holding | None = None, context: CopyContext | None = None,
               **changes) -> mirror.Decision:
        return mirror.decide(dataclasses.replace(RULES, **changes), fill(size="400"), MARKET,
                             holding or Holding(), context=context)

    details = [
        decide(max_trade_usdc=D("5.2")).detail,
        decide(daily_budget_usdc=D("4.8")).detail,
        decide(min_trade_usdc=D(500)).detail,
        decide(min_target_trade_usdc=D(1000)).detail,
        decide(min_price=D("0.6")).detail,
        decide(holding=Holding(shares=D(10), cost_usdc=D(100))).detail,
        decide(max_total_exposure_usdc=D(1),
               context=CopyContext(user_exposure_usdc=D(1))).detail,
        decide(exclude_keywords=("rain",)).detail,
    ]
    for detail in details:
        assert detail and not FIELD_NAMES.search(detail), detail
    assert "cut from 200.00 to 10.00 shares by the max per trade of 5.20 pUSD" in details[0]
    assert "by the daily budget" in details[1]
    assert "under the min per trade of 500.00 pUSD" in details[2]
    assert "worth 200.00 pUSD, under the smallest trader's trade to copy of 1,000.00 pUSD" \
        in details[3]


def test_a_fixed_size_copy_says_why_it_spends_less_than_its_amount():
    fees = FeeSchedule(rate=D("0.07"), exponent=D(1), taker_only=True, rebate_rate=D(0))
    decision = mirror.decide(
        dataclasses.replace(RULES, sizing_mode="fixed_usdc", fixed_usdc=D(5)),
        fill(size="1000"), dataclasses.replace(MARKET, fees=fees), Holding())
    assert decision.copies and decision.usdc < D(5)
    assert decision.detail.startswith(f"Buy {decision.size:.2f} shares (fixed 5.00 pUSD per "
                                      "copy); ")
    assert (f"spends at most {decision.usdc:.2f} pUSD of the 5.00 pUSD: shares are bought in "
            "steps of 0.01 at up to 0.52 each, the taker fee takes about ") in decision.detail
    assert decision.detail.endswith("and a fill at a better price costs less.")
    multiplier = mirror.decide(RULES, fill(), MARKET, Holding())
    assert "spends at most" not in multiplier.detail  # only a fixed amount explains itself


def test_skip_and_exit_sentences_show_prices_to_the_tick_and_bps_as_percentages():
    ticked = re.compile(r"\b0\.\d{3,}")  # a price past the market's 0.01 tick
    deviated = mirror.decide(RULES, fill(price="0.4523"), MARKET, Holding())
    assert deviated.reason == mirror.PRICE_DEVIATION
    assert deviated.detail == ("The book's 0.51 is 12.76 % from the trader's fill at 0.45; the "
                               "price deviation allows 5 %.")
    drawdown = mirror.stop_signal(dataclasses.replace(RULES, max_drawdown_bps=1250),
                                  D(-5), D(5), D(50))
    assert drawdown == (mirror.DRAWDOWN_STOP, "PnL -5.00 pUSD is 18.18 % below its peak of "
                        "5.00 pUSD (the max drawdown is 12.50 %).")
    held = Holding(shares=D(10), cost_usdc=D("4.523"))  # an average cost of 0.4523
    exits = dataclasses.replace(RULES, take_profit_bps=500, exit_hours_before_end=D(2))
    taken = mirror.decide_exit(exits, "1", held, MARKET)
    assert taken.detail == "Take profit: best bid 0.49 vs average cost 0.45."
    closing = mirror.closing_sell(exits, "1", held, MARKET, "market_end")
    assert closing.detail.startswith("The market ends within 2 h (the exit hours before the "
                                     "end): sell all 10.00 shares at market")
    stopped = mirror.closing_sell(exits, "1", held, MARKET, mirror.LOSS_STOP)
    assert stopped.detail.startswith("Loss stop: sell all 10.00 shares")
    for detail in (deviated.detail, drawdown[1], taken.detail, closing.detail, stopped.detail):
        assert "bps" not in detail and not ticked.search(detail), detail
        assert not FIELD_NAMES.search(detail) and "_" not in detail, detail
