"""The copy rules by the names people see: every message, page and decision detail names a
rule by its label here, never by its field (the API and payloads keep the fields)."""

from __future__ import annotations

from typing import Any

from services.platform import numbers

LABELS: dict[str, str] = {
    "target_name": "name",
    "paper_trading": "paper trading",
    "size_multiplier": "size multiplier",
    "sizing_mode": "sizing mode",
    "fixed_usdc": "fixed amount per copy",
    "max_position_usdc": "max position",
    "price_deviation_bps": "price deviation",
    "blocked_categories": "blocked categories",
    "take_profit_bps": "take profit",
    "stop_loss_bps": "stop loss",
    "min_trade_usdc": "min per trade",
    "max_trade_usdc": "max per trade",
    "round_up_to_min": "round up to the minimum",
    "min_target_trade_usdc": "smallest trader's trade to copy",
    "min_price": "min price",
    "max_price": "max price",
    "copy_buys": "copy buys",
    "copy_sells": "copy sells",
    "direction": "direction",
    "daily_budget_usdc": "daily budget",
    "total_budget_usdc": "total budget",
    "max_total_exposure_usdc": "exposure limit",
    "loss_stop_usdc": "loss stop",
    "max_drawdown_bps": "max drawdown",
    "close_positions_on_stop": "close positions on stop",
    "max_consecutive_failures": "failures before pausing",
    "start_mode": "start mode",
    "skip_if_ends_within_hours": "skip markets ending within",
    "exit_hours_before_end": "exit hours before the end",
    "include_keywords": "only questions containing",
    "exclude_keywords": "never questions containing",
    "copy_pending_matches": "copy pending matches",
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
