"""Which agent tool calls move money, and the words a person confirms for each (issue 47).

``summary(user, tool, arguments)`` is None when the call needs no confirmation (a paper
config, a limit lowered), else one paragraph with the call's words and numbers: for an
order, the preview's own confirmation line.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from models.copying import CopyConfig
from models.trading import OrderPreview
from services.copying import configs
from services.copying.configs import crud
from services.platform import errors, numbers
from services.platform.principal import user_id_of
from services.trading import previews

# Caps where a larger value lets more money move; None (off) lets the most.
CAPS: tuple[str, ...] = ("max_position_usdc", "max_trade_usdc", "daily_budget_usdc",
                         "total_budget_usdc", "loss_stop_usdc", "max_drawdown_bps")
# Sizes where a larger value moves more money per copy; None is not "unlimited" here.
SIZES: tuple[str, ...] = ("size_multiplier", "fixed_usdc")
LABELS = {"max_position_usdc": "the most per position", "max_trade_usdc": "the most per trade",
          "daily_budget_usdc": "the daily budget", "total_budget_usdc": "the total budget",
          "loss_stop_usdc": "the loss stop", "max_drawdown_bps": "the drawdown stop",
          "size_multiplier": "the size multiplier", "fixed_usdc": "the fixed amount per copy"}


def _order(user: Any, args: dict[str, Any]) -> str:
    preview = OrderPreview.get_or_none(OrderPreview.id == args.get("preview_id"),
                                       OrderPreview.user == user_id_of(user))
    if preview is not None:
        return str(previews.summary_of(preview).get("confirmation"))
    verb = "Buy" if str(args.get("side", "")).lower() == "buy" else "Sell"
    return (f"{verb} {numbers.shares(args.get('size'))} shares of outcome token "
            f"{args.get('token_id')} with real funds.")


def _who(fields: dict[str, Any]) -> str:
    return str(fields.get("target_name") or fields.get("target_address"))


def _terms(fields: dict[str, Any]) -> str:
    if fields.get("sizing_mode") == "fixed_usdc" and fields.get("fixed_usdc") is not None:
        sizing = f"{numbers.money(fields['fixed_usdc'])} per copy"
    else:
        sizing = f"size {numbers.multiplier(fields.get('size_multiplier'))}"
    return (f"{sizing}, at most {numbers.money(fields.get('max_position_usdc'))} per "
            "position")


def _create(user: Any, args: dict[str, Any]) -> str | None:
    try:
        fields = crud.previewed_fields(user, args.get("preview_id"))
    except errors.NotFound:
        return "Create a copy config that trades with real funds."
    if fields.get("paper_trading"):
        return None
    return f"Create a config copying {_who(fields)} with real funds: {_terms(fields)}."


def _config(user: Any, args: dict[str, Any]) -> CopyConfig | None:
    try:
        return configs.get(user, args.get("config_id"))
    except errors.NotFound:
        return None


def _start(user: Any, args: dict[str, Any]) -> str | None:
    config = _config(user, args)
    if config is None or config.paper_trading or config.is_active:
        return None  # the tool refuses, or changes nothing, or moves no real money
    fields = crud.rule_fields(config)
    return (f"Start copying {_who({**fields, 'target_address': config.target_address})} with "
            f"real funds: {_terms(fields)}.")


def _raised(name: str, old: Any, new: Any) -> bool:
    if name in CAPS and new is None:
        return old is not None
    if new is None or old is None:
        return old is None and new is not None and name in SIZES
    return Decimal(str(new)) > Decimal(str(old))


def _shown(name: str, value: Any) -> str:
    if value is None:
        return "off"
    if name == "size_multiplier":
        return numbers.multiplier(value)
    if name.endswith("_bps"):
        return numbers.bps(value)
    return numbers.money(value)


def _update(user: Any, args: dict[str, Any]) -> str | None:
    config = _config(user, args)
    if config is None:
        return None  # the tool answers not_found
    old = crud.rule_fields(config)
    if args.get("paper_trading", config.paper_trading):
        return None  # the config stays on the paper book
    changes = []
    if old.get("paper_trading") and args.get("paper_trading") is False:
        changes.append("switch it from paper to real funds")
    changes += [f"raise {LABELS[name]} from {_shown(name, old.get(name))} to "
                f"{_shown(name, args[name])}" for name in (*SIZES, *CAPS)
                if name in args and _raised(name, old.get(name), args[name])]
    if not changes:
        return None
    who = _who({**old, "target_address": config.target_address})
    return f"Change the copy config for {who}: " + "; ".join(changes) + "."


def _claim(user: Any, args: dict[str, Any]) -> str:
    tokens = args.get("token_ids")
    which = (f"{numbers.plural(len(tokens), 'position')} you chose" if tokens
             else "every resolved winning position")
    return f"Claim {which} on chain; the wallet pays the gas."


SUMMARIES: dict[str, Callable[[Any, dict[str, Any]], str | None]] = {
    "place_market_order": _order,
    "create_copy_config": _create,
    "start_copying": _start,
    "update_copy_config": _update,
    "claim_positions": _claim,
}


def guarded(tool: str) -> bool:
    """True for tools that may move money (and so may ask for a confirmation)."""
    return tool in SUMMARIES


def summary(user: Any, tool: str, arguments: dict[str, Any]) -> str | None:
    """What the person confirms for this call; None when it moves no real money."""
    describe = SUMMARIES.get(tool)
    return None if describe is None else describe(user, arguments)
