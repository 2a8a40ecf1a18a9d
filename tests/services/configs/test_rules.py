"""Copy-config field rules: bounds, precision, and which bad field the message names first."""

from __future__ import annotations

from decimal import Decimal

import pytest

from services.copying.configs import rules
from services.platform import errors

ADDRESS = "0x" + "Ab" * 20


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
