"""Copy-config field rules: bounds, precision, and which bad field the message names first."""

from __future__ import annotations

from decimal import Decimal

import pytest
from eth_utils import to_checksum_address

from services.copying.configs import rules
from services.platform import errors

ADDRESS = to_checksum_address("0x" + "ab" * 20)  # mixed case with its EIP-55 checksum


def test_clean_fields_come_back_typed_and_normalised():
    clean = rules.validate_fields({"target_address": ADDRESS, "size_multiplier": "0.5",
                                   "max_position_usdc": 25, "target_name": "  whale "})
    assert clean == {"target_address": ADDRESS.lower(), "size_multiplier": Decimal("0.5"),
                     "max_position_usdc": Decimal(25), "target_name": "whale"}


@pytest.mark.parametrize(("field", "value", "message"), [
    ("size_multiplier", "0", "Must be greater than 0 and at most 100."),
    ("size_multiplier", "100.0000001", "Must be greater than 0 and at most 100."),
    ("size_multiplier", "0.0000001", "At most 6 decimal places."),
    ("size_multiplier", 1.5, "Must be greater than 0 and at most 100."),  # floats refused
    ("max_position_usdc", "1000000.01", "Must be greater than 0 and at most 1000000."),
    ("max_position_usdc", "1.1234567", "At most 6 decimal places."),
    ("max_position_usdc", True, "Must be greater than 0 and at most 1000000."),
])
def test_amounts_are_bounded_decimals(field, value, message):
    raw = {"target_address": ADDRESS, "size_multiplier": "1", "max_position_usdc": "10",
           field: value}
    with pytest.raises(errors.ValidationFailed) as raised:
        rules.validate_fields(raw)
    assert raised.value.fields == {field: [message]}
    assert raised.value.message == f"Invalid {field}: {message}"


def test_the_message_names_the_first_bad_field_in_rule_order():
    with pytest.raises(errors.ValidationFailed) as raised:
        rules.validate_fields({"target_address": ADDRESS, "size_multiplier": "0",
                               "max_position_usdc": "0"})
    assert list(raised.value.fields) == ["size_multiplier", "max_position_usdc"]
    assert raised.value.message.startswith("Invalid size_multiplier:")


def test_partial_edits_need_no_required_field():
    assert rules.validate_fields({"paper_trading": False}, partial=True) == {
        "paper_trading": False}
    with pytest.raises(errors.ValidationFailed) as raised:
        rules.validate_fields({"paper_trading": False})
    assert set(raised.value.fields) == set(rules.REQUIRED_FIELDS)


# -- issue 27: the new fields, one by one and in combination ----------------------------

def _refused(raw: dict, field: str, *, partial: bool = False) -> str:
    base = {} if partial else {"target_address": ADDRESS, "size_multiplier": "1",
                               "max_position_usdc": "10"}
    with pytest.raises(errors.ValidationFailed) as raised:
        rules.check_combination(rules.validate_fields({**base, **raw}, partial=partial))
    assert field in raised.value.fields, raised.value.fields
    return raised.value.fields[field][0]


@pytest.mark.parametrize(("raw", "field"), [
    ({"min_trade_usdc": "10", "max_trade_usdc": "5"}, "min_trade_usdc"),
    ({"min_price": "0.6", "max_price": "0.6"}, "min_price"),
    ({"min_price": "0.7", "max_price": "0.2"}, "min_price"),
    ({"max_price": "1.5"}, "max_price"),
    ({"min_price": "-0.1"}, "min_price"),
    ({"daily_budget_usdc": "0"}, "daily_budget_usdc"),
    ({"total_budget_usdc": "-5"}, "total_budget_usdc"),
    ({"loss_stop_usdc": "0"}, "loss_stop_usdc"),
    ({"sizing_mode": "fixed_usdc"}, "fixed_usdc"),
    ({"fixed_usdc": "5"}, "fixed_usdc"),  # contradicts the multiplier mode
    ({"sizing_mode": "proportional", "fixed_usdc": "5"}, "fixed_usdc"),
    ({"round_up_to_min": True}, "round_up_to_min"),
    ({"close_positions_on_stop": True}, "close_positions_on_stop"),
    ({"copy_buys": False, "copy_sells": False}, "copy_sells"),
    ({"max_consecutive_failures": 0}, "max_consecutive_failures"),
    ({"max_drawdown_bps": 0}, "max_drawdown_bps"),
    ({"sizing_mode": "martingale"}, "sizing_mode"),
    ({"direction": "sideways"}, "direction"),
    ({"start_mode": "yesterday"}, "start_mode"),
    ({"skip_if_ends_within_hours": "0"}, "skip_if_ends_within_hours"),
    ({"include_keywords": [f"w{i}" for i in range(51)]}, "include_keywords"),
    ({"exclude_keywords": ["x" * 101]}, "exclude_keywords"),
    ({"exclude_keywords": "trump"}, "exclude_keywords"),
])
def test_bad_rules_are_refused_naming_the_field(raw, field):
    _refused(raw, field)


def test_good_rules_come_back_typed():
    clean = rules.validate_fields({
        "target_address": ADDRESS, "sizing_mode": "fixed_usdc", "fixed_usdc": "7.5",
        "max_position_usdc": "50", "min_trade_usdc": "2", "max_trade_usdc": "10",
        "round_up_to_min": True, "min_price": "0.05", "max_price": "0.95",
        "include_keywords": [" Election ", "election", "FED"], "max_consecutive_failures": 3,
        "direction": "inverse", "skip_if_ends_within_hours": "1.5",
    })
    rules.check_combination(clean)
    assert clean["fixed_usdc"] == Decimal("7.5") and clean["min_price"] == Decimal("0.05")
    assert clean["include_keywords"] == ["election", "fed"]  # folded, deduplicated
    assert clean["skip_if_ends_within_hours"] == Decimal("1.5")
    assert "size_multiplier" not in clean  # a fixed amount needs no multiplier


@pytest.mark.parametrize("address", [
    "0x" + "ab" * 20, "0x" + "AB" * 20, to_checksum_address("0x" + "ab" * 20)])
def test_addresses_in_one_case_or_checksummed_pass(address):
    clean = rules.validate_fields({"target_address": address}, partial=True)
    assert clean["target_address"] == "0x" + "ab" * 20


def test_a_mixed_case_address_with_a_wrong_checksum_is_refused():
    good = to_checksum_address("0x" + "ab" * 20)
    typo = good[:2] + good[2].swapcase() + good[3:]
    message = _refused({"target_address": typo}, "target_address")
    assert "checksum" in message
