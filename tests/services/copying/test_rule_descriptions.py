"""A config's rules in people's words (``rule_labels.described``): the shared-setup page's
lines, each a rule's label and its value as money, percentages, prices, hours or words."""

from __future__ import annotations

import re
from decimal import Decimal as D

from schemas.rule_fields import DEFAULTS as RULE_DEFAULTS
from services.copying.configs.rules import EDITABLE_FIELDS
from services.copying.rule_labels import described

# Field names a label must not show ("direction" is both).
FIELD_NAMES = re.compile(r"\b(" + "|".join(sorted((f for f in EDITABLE_FIELDS if "_" in f),
                                                  key=len, reverse=True)) + r")\b")


def test_every_rule_reads_in_words():
    rules = {**RULE_DEFAULTS, "sizing_mode": "fixed_usdc", "fixed_usdc": D("5"),
             "size_multiplier": None, "max_position_usdc": D("1250"), "price_deviation_bps": 250,
             "blocked_categories": ["sports", "crypto"], "take_profit_bps": None,
             "stop_loss_bps": 3000, "min_price": D("0.1"), "daily_budget_usdc": D("40"),
             "skip_if_ends_within_hours": D("24.0"), "start_mode": "copy_open_positions",
             "copy_sells": False, "exclude_keywords": ["election"]}
    lines = dict(described(rules))
    assert lines["sizing"] == "fixed 5.00 pUSD per copy"
    assert lines["max position"] == "1,250.00 pUSD"
    assert lines["price deviation"] == "2.50 %" and lines["stop loss"] == "30 %"
    assert lines["take profit"] == "off" and lines["total budget"] == "off"
    assert lines["blocked categories"] == "sports, crypto"
    assert lines["min price"] == "0.10" and lines["daily budget"] == "40.00 pUSD"
    assert lines["skip markets ending within"] == "24 h"
    assert lines["start mode"] == "copy open positions"
    assert lines["copy sells"] == "no" and lines["copy buys"] == "yes"
    assert lines["never questions containing"] == "election"
    assert lines["only questions containing"] == "any"
    # One line per rule, sizing folded into one; no field name shows.
    assert len(lines) == len(rules) - 2
    for label, words in lines.items():
        assert not FIELD_NAMES.search(label) and not FIELD_NAMES.search(words), (label, words)


def test_a_list_of_bands_reads_band_by_band():
    bands = [{"max_price": D("0.3"), "max_deviation_bps": 100},
             {"max_price": D("0.7"), "max_deviation_bps": 400}]
    assert dict(described({"sizing_mode": "multiplier", "size_multiplier": D("0.5"),
                           "price_deviation_bands": bands}))["price deviation bands"] == (
        "max price 0.30, max deviation bps 1 %; max price 0.70, max deviation bps 4 %")
