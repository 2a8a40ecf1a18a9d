"""The copy rules by the names people see: every message, page and decision detail names a
rule by its label here, never by its field (the API and payloads keep the fields)."""

from __future__ import annotations

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
