"""The copy rules by the names people see: every message, page and decision detail names a
rule by its label here, never by its field (the API and payloads keep the fields)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from schemas.rule_fields import RULES
from services.platform import numbers

LABELS: dict[str, str] = {
    "target_name": "name",
    "paper_trading": "paper trading",
    **{rule.name: rule.label for rule in RULES},
    "max_total_exposure_usdc": "exposure limit",
}
"""Each rule field's label, as a sentence names it."""


def label(field: str) -> str:
    """The label of rule ``field`` (the field with spaces for one not listed)."""
    return LABELS.get(field, field.replace("_", " "))


def sizing(mode: str | None, multiplier: Any, fixed: Any) -> str:
    """The sizing mode in force, in words: "fixed 5.00 pUSD per copy", "x1.15 of the
    trader's size" (a times sign), "proportional x1.15 (our balance / the trader's value)"."""
    if mode == "fixed_usdc":
        return f"fixed {numbers.money(fixed)} per copy"
    if mode == "proportional":
        return (f"proportional {numbers.multiplier(multiplier)} (our balance ÷ the "
                "trader's value)")
    return f"{numbers.multiplier(multiplier)} of the trader's size"


# An empty list that means "every one", not "none".
_EMPTY = {"include_keywords": "any"}
# The fields ``described`` shows as one sizing line.
_SIZING_FIELDS = ("sizing_mode", "size_multiplier", "fixed_usdc")


def described(rules: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Each rule as (label, value in words), the sizing first in one line; a rule that is
    off reads "off"."""
    lines = [("sizing", sizing(rules.get("sizing_mode"), rules.get("size_multiplier"),
                               rules.get("fixed_usdc")))]
    lines += [(label(name), _words(name, value)) for name, value in rules.items()
              if name not in _SIZING_FIELDS]
    return lines


def _words(name: str, value: Any) -> str:
    """One rule's value as a page shows it, chosen by the kind its field name says."""
    if value is None:
        return "off"
    if value == []:
        return _EMPTY.get(name, "none")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        if all(isinstance(item, Mapping) for item in value):  # bands: one per "; "
            return "; ".join(", ".join(f"{label(k)} {_words(k, v)}" for k, v in item.items())
                             for item in value)
        return ", ".join(str(item) for item in value)
    if name.endswith("_usdc"):
        return numbers.money(value)
    if name.endswith("_bps"):
        return numbers.bps(value)
    if name.endswith("price"):
        return numbers.price(value)
    if name.endswith("_hours"):
        return f"{format(Decimal(str(value)).normalize(), 'f')} h"
    if name.endswith("_seconds"):
        return numbers.plural(value, "second")
    if name.endswith("multiplier"):
        return numbers.multiplier(value)
    return str(value).replace("_", " ")
