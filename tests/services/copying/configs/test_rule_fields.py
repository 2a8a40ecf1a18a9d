"""The rule declarations hold the rest together: the model's columns, the engine's
``CopyRules``, the labels, the schemas and the form all carry every declared rule, alike."""

from __future__ import annotations

import dataclasses

import peewee
import pytest

from models.base import DecimalTextField
from models.copying import CopyConfig
from schemas import rule_fields
from schemas.configs import ConfigFieldsSchema, CopyConfigSchema
from services.copying import mirror
from services.copying.configs import rules as config_rules
from services.copying.rule_labels import LABELS

COLUMN_KINDS = {
    rule_fields.POSITIVE: DecimalTextField, rule_fields.PRICE: DecimalTextField,
    rule_fields.HOURS: DecimalTextField, rule_fields.INTEGER: peewee.IntegerField,
    rule_fields.FLAG: peewee.BooleanField, rule_fields.CHOICE: peewee.CharField,
    rule_fields.WORDS: peewee.TextField, rule_fields.CATEGORIES: peewee.TextField,
    rule_fields.BANDS: peewee.TextField,
}


@pytest.mark.parametrize("rule", rule_fields.RULES, ids=lambda r: r.name)
def test_each_rule_is_a_column_of_its_kind_with_its_default(rule):
    column = CopyConfig._meta.fields[rule.name]
    assert isinstance(column, COLUMN_KINDS[rule.kind])
    assert column.null == rule.nullable
    if rule.kind == rule_fields.BANDS:
        assert column.default == "[]"  # a row left without: the single limit, as before
    elif column.default is not None:
        assert column.default == rule.stored(rule.default)
    if rule.kind == rule_fields.CHOICE:
        assert max(len(v) for v in rule.values) <= column.max_length


def test_copy_rules_carries_every_rule_with_its_declared_default():
    attributes = {f.name: f for f in dataclasses.fields(mirror.CopyRules)}
    assert set(attributes) == {*rule_fields.NAMES, "max_total_exposure_usdc"}
    for rule in rule_fields.RULES:
        declared = attributes[rule.name].default
        if declared is dataclasses.MISSING:
            assert rule.default is None and not rule.nullable, rule.name  # required
        elif rule.kind in rule_fields.LIST_KINDS:
            assert not declared  # none left out; a new config gets the declared default
        else:
            assert declared == rule.default, rule.name
    loaded = mirror.CopyRules.from_fields(rule_fields.rules_of(
        {"size_multiplier": 1, "max_position_usdc": 10}))
    assert loaded.max_consecutive_failures == rule_fields.default("max_consecutive_failures")


def test_every_rule_has_a_label_a_reason_text_and_a_field_on_each_surface():
    for rule in rule_fields.RULES:
        assert LABELS[rule.name] == rule.label
        assert set(rule.reasons) <= set(mirror.REASONS), rule.name
        assert rule.name in ConfigFieldsSchema().fields
        assert rule.name in CopyConfigSchema().fields
        assert rule.name in config_rules.EDITABLE_FIELDS
        assert rule.group in dict(rule_fields.GROUPS)


def test_the_dashboard_hints_name_no_reason_code() -> None:
    """The form's hint under a rule reads in words: the API's help names the skip reason's
    code ("(daily_budget_exhausted)"), which the dashboard leaves out (issue 44: no field
    or code names on a page)."""
    import re

    from schemas.rule_fields import RULES

    coded = {rule.name: rule.hint for rule in RULES
             if re.search(r"\([a-z]+(_[a-z]+)+\)", rule.hint)}
    assert not coded, coded
    budget = next(rule for rule in RULES if rule.name == "daily_budget_usdc")
    assert "daily_budget_exhausted" in budget.help  # the API's and the docs' help keep it
    assert budget.hint == "Spent per UTC day by copies, sells giving back."
