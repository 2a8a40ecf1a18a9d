"""Copy-config rules: the limits, which fields exist and may change, validation, defaults.

``validate_fields`` is the one place config fields are checked (schemas/configs.py and
every surface rely on it); ``with_defaults`` fills what a new config leaves out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.copying import CopyConfig
from services.copying import mirror as copying
from services.platform import errors, venues
from services.platform.addresses import checked_address

MAX_SIZE_MULTIPLIER = Decimal(100)
MAX_POSITION_USDC = Decimal(1_000_000)
MAX_BPS = 10000
MAX_EXIT_BPS = 1_000_000
MAX_TARGET_NAME = 120
DEFAULT_DEVIATION_BPS = 200
MAX_KEYWORDS = 50
MAX_KEYWORD_LENGTH = 100
MAX_HOURS = Decimal(24 * 365)
MAX_FAILURES = 1000

# pUSD amounts of issue 27's rules: each null (off) or above 0 (a budget of 0 is refused).
AMOUNT_FIELDS: tuple[str, ...] = (
    "fixed_usdc", "min_trade_usdc", "max_trade_usdc", "min_target_trade_usdc",
    "daily_budget_usdc", "total_budget_usdc", "loss_stop_usdc",
)
PRICE_FIELDS: tuple[str, ...] = ("min_price", "max_price")
HOUR_FIELDS: tuple[str, ...] = ("skip_if_ends_within_hours", "exit_hours_before_end")
FLAG_FIELDS: tuple[str, ...] = ("round_up_to_min", "copy_buys", "copy_sells",
                                "close_positions_on_stop", "copy_pending_matches")
CHOICE_FIELDS: dict[str, tuple[str, ...]] = {
    "sizing_mode": copying.SIZING_MODES, "direction": copying.DIRECTIONS,
    "start_mode": copying.START_MODES,
}
KEYWORD_FIELDS: tuple[str, ...] = ("include_keywords", "exclude_keywords")
# Every Decimal a config field holds (a preview stores them as text).
DECIMAL_FIELDS: tuple[str, ...] = ("size_multiplier", "max_position_usdc", *AMOUNT_FIELDS,
                                   *PRICE_FIELDS, *HOUR_FIELDS)
# JSON lists stored as text on the model.
LIST_FIELDS: tuple[str, ...] = ("blocked_categories", *KEYWORD_FIELDS)
RULE_DEFAULTS: dict[str, Any] = {
    "sizing_mode": "multiplier", **dict.fromkeys(AMOUNT_FIELDS), **dict.fromkeys(PRICE_FIELDS),
    **dict.fromkeys(HOUR_FIELDS), "round_up_to_min": False, "copy_buys": True,
    "copy_sells": True, "close_positions_on_stop": False, "direction": "mirror",
    "max_drawdown_bps": None, "max_consecutive_failures": 5, "start_mode": "new_trades_only",
    "include_keywords": [], "exclude_keywords": [], "copy_pending_matches": False,
}

# Fields a PUT may change; the target is fixed for a config's life (create a new one).
EDITABLE_FIELDS: tuple[str, ...] = (
    "target_name", "size_multiplier", "max_position_usdc", "price_deviation_bps",
    "blocked_categories", "take_profit_bps", "stop_loss_bps", "paper_trading",
    *RULE_DEFAULTS,
)
CREATE_FIELDS: tuple[str, ...] = ("target_address", *EDITABLE_FIELDS)
REQUIRED_FIELDS: tuple[str, ...] = ("target_address", "size_multiplier", "max_position_usdc")


def venue_categories() -> dict[str, str]:
    """The venue's categories: normalised slug/label -> display label (cached by the client)."""
    tags = venues.client().gamma.tags()
    names: dict[str, str] = {}
    for tag in tags:
        for value in (tag.slug, tag.label):
            if value:
                names[next(iter(copying.normalise_categories([value])))] = tag.label
    return names


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool) or value is None:
        return None
    try:
        return Decimal(str(value)) if isinstance(value, str | int) else None
    except ArithmeticError:
        return None


def validate_fields(raw: Mapping[str, Any], *, partial: bool = False) -> dict[str, Any]:
    """Check config fields; the cleaned values, or ValidationFailed naming each bad field."""
    problems: dict[str, list[str]] = {}
    clean: dict[str, Any] = {}
    unknown = set(raw) - set(CREATE_FIELDS) - {"preview_id"}
    for name in sorted(unknown):
        problems[name] = ["Unknown field."]
    if not partial:
        for name in REQUIRED_FIELDS:
            if name == "size_multiplier" and raw.get("sizing_mode") == "fixed_usdc":
                continue  # a fixed amount per copy multiplies nothing
            if raw.get(name) is None:
                problems[name] = ["Missing data for required field."]

    def bad(name: str, message: str) -> None:
        problems.setdefault(name, []).append(message)

    if raw.get("target_address") is not None:
        try:
            clean["target_address"] = checked_address(raw["target_address"],
                                                      "target_address").lower()
        except errors.ValidationFailed as exc:
            for message in exc.fields["target_address"]:
                bad("target_address", message)
    if "target_name" in raw:
        name = raw["target_name"] if raw["target_name"] is not None else ""
        if not isinstance(name, str) or len(name.strip()) > MAX_TARGET_NAME:
            bad("target_name", f"A string of at most {MAX_TARGET_NAME} characters.")
        else:
            clean["target_name"] = name.strip()
    for amount, limit in (("size_multiplier", MAX_SIZE_MULTIPLIER),
                          ("max_position_usdc", MAX_POSITION_USDC)):
        if raw.get(amount) is None:
            continue
        value = _decimal(raw[amount])
        if value is None or not 0 < value <= limit:
            bad(amount, f"Must be greater than 0 and at most {limit}.")
        elif value.as_tuple().exponent < -6:  # type: ignore[operator]
            bad(amount, "At most 6 decimal places.")
        else:
            clean[amount] = value
    if raw.get("price_deviation_bps") is not None:
        value = raw["price_deviation_bps"]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BPS:
            bad("price_deviation_bps", f"An integer from 0 to {MAX_BPS}.")
        else:
            clean["price_deviation_bps"] = value
    for name in ("take_profit_bps", "stop_loss_bps"):
        if name in raw:
            value = raw[name]
            if value is None:
                clean[name] = None
            elif isinstance(value, bool) or not isinstance(value, int) or not (
                    0 < value <= (MAX_BPS if name == "stop_loss_bps" else MAX_EXIT_BPS)):
                limit = MAX_BPS if name == "stop_loss_bps" else MAX_EXIT_BPS
                bad(name, f"Null or a positive integer up to {limit}.")
            else:
                clean[name] = value
    if "paper_trading" in raw and raw["paper_trading"] is not None:
        if not isinstance(raw["paper_trading"], bool):
            bad("paper_trading", "Must be a boolean.")
        else:
            clean["paper_trading"] = raw["paper_trading"]
    if "blocked_categories" in raw:
        values = raw["blocked_categories"] or []
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            bad("blocked_categories", "A list of category names.")
        else:
            wanted = sorted(copying.normalise_categories(values))
            if wanted:
                known = venue_categories()
                unknown_cats = [v for v in wanted if v not in known]
                if unknown_cats:
                    bad("blocked_categories",
                        f"Unknown categories {unknown_cats}; the venue's are "
                        f"{sorted(set(known.values()))}.")
            clean["blocked_categories"] = wanted
    _validate_rules(raw, clean, bad)
    if problems:
        first = next(iter(problems))
        raise errors.ValidationFailed(f"Invalid {first}: {problems[first][0]}", fields=problems)
    return clean


def _amount(value: Any, limit: Decimal) -> Decimal | None:
    """A positive Decimal of at most 6 places up to ``limit``, else None."""
    amount = _decimal(value)
    if amount is None or not 0 < amount <= limit or amount.as_tuple().exponent < -6:  # type: ignore[operator]
        return None
    return amount


def _validate_rules(raw: Mapping[str, Any], clean: dict[str, Any],
                    bad: Callable[[str, str], None]) -> None:
    """Issue 27's fields, one by one (their combinations: ``check_combination``)."""
    for name in AMOUNT_FIELDS:
        if name in raw:
            if raw[name] is None:
                clean[name] = None
            elif (value := _amount(raw[name], MAX_POSITION_USDC)) is None:
                bad(name, f"Null, or greater than 0 and at most {MAX_POSITION_USDC} "
                          "(6 decimal places).")
            else:
                clean[name] = value
    for names, low, high, message in (
            (PRICE_FIELDS, Decimal(0), Decimal(1), "Null or a price from 0 to 1."),
            (HOUR_FIELDS, None, MAX_HOURS,
             f"Null or a number of hours above 0, at most {MAX_HOURS}.")):
        for name in (n for n in names if n in raw):
            value = _decimal(raw[name])
            if raw[name] is None:
                clean[name] = None
            elif value is None or value > high or (value < low if low is not None
                                                     else value <= 0):
                bad(name, message)
            else:
                clean[name] = value
    for name in FLAG_FIELDS:
        if name in raw and raw[name] is not None:
            if not isinstance(raw[name], bool):
                bad(name, "Must be a boolean.")
            else:
                clean[name] = raw[name]
    for name, choices in CHOICE_FIELDS.items():
        if name in raw and raw[name] is not None:
            if raw[name] not in choices:
                bad(name, f"One of {', '.join(choices)}.")
            else:
                clean[name] = raw[name]
    if "max_drawdown_bps" in raw:
        value = raw["max_drawdown_bps"]
        if value is None:
            clean["max_drawdown_bps"] = None
        elif isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_BPS:
            bad("max_drawdown_bps", f"Null or an integer from 1 to {MAX_BPS}.")
        else:
            clean["max_drawdown_bps"] = value
    if raw.get("max_consecutive_failures") is not None:
        value = raw["max_consecutive_failures"]
        if isinstance(value, bool) or not isinstance(value, int) or not (
                1 <= value <= MAX_FAILURES):
            bad("max_consecutive_failures", f"An integer from 1 to {MAX_FAILURES}.")
        else:
            clean["max_consecutive_failures"] = value
    for name in KEYWORD_FIELDS:
        if name in raw:
            words = _keywords(raw[name])
            if isinstance(words, str):
                bad(name, words)
            else:
                clean[name] = words


def _keywords(value: Any) -> list[str] | str:
    """Keywords folded for matching, or what is wrong with them."""
    values = value or []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return "A list of keywords."
    if len(values) > MAX_KEYWORDS:
        return f"At most {MAX_KEYWORDS} keywords."
    if any(len(v.strip()) > MAX_KEYWORD_LENGTH for v in values):
        return f"Each keyword at most {MAX_KEYWORD_LENGTH} characters."
    return list(dict.fromkeys(v.strip().casefold() for v in values if v.strip()))


def check_combination(fields: Mapping[str, Any]) -> None:
    """Refuse (ValidationFailed naming the field) rules that contradict each other.

    ``fields`` is the whole config as it would be: a new one with its defaults, or a stored
    one with an edit applied.
    """
    problems: dict[str, list[str]] = {}

    def get(name: str) -> Any:
        return fields.get(name, RULE_DEFAULTS.get(name))

    mode = get("sizing_mode")
    if mode == "fixed_usdc" and get("fixed_usdc") is None:
        problems["fixed_usdc"] = ["Required with sizing_mode fixed_usdc."]
    if mode != "fixed_usdc" and get("fixed_usdc") is not None:
        problems["fixed_usdc"] = [f"Only with sizing_mode fixed_usdc (the mode is {mode})."]
    low, high = get("min_trade_usdc"), get("max_trade_usdc")
    if low is not None and high is not None and low > high:
        problems["min_trade_usdc"] = ["Must not exceed max_trade_usdc."]
    if get("round_up_to_min") and low is None:
        problems["round_up_to_min"] = ["Needs min_trade_usdc."]
    low, high = get("min_price"), get("max_price")
    if low is not None and high is not None and low >= high:
        problems["min_price"] = ["Must be below max_price."]
    if get("close_positions_on_stop") and get("loss_stop_usdc") is None \
            and get("max_drawdown_bps") is None:
        problems["close_positions_on_stop"] = ["Needs loss_stop_usdc or max_drawdown_bps."]
    if get("copy_buys") is False and get("copy_sells") is False:
        problems["copy_sells"] = ["copy_buys and copy_sells both off would copy nothing."]
    if mode == "fixed_usdc" and get("fixed_usdc") is not None \
            and get("max_trade_usdc") is not None and get("fixed_usdc") > get("max_trade_usdc"):
        problems["fixed_usdc"] = ["Must not exceed max_trade_usdc."]
    if problems:
        first = next(iter(problems))
        raise errors.ValidationFailed(f"Invalid {first}: {problems[first][0]}", fields=problems)


def validate_limits(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The user's limits across its configs (``max_total_exposure_usdc``: null or above 0)."""
    problems = {name: ["Unknown field."] for name in sorted(set(raw) - {"max_total_exposure_usdc"})}
    clean: dict[str, Any] = {}
    if "max_total_exposure_usdc" in raw:
        value = raw["max_total_exposure_usdc"]
        amount = None if value is None else _amount(value, MAX_POSITION_USDC)
        if value is not None and amount is None:
            problems["max_total_exposure_usdc"] = [
                f"Null, or greater than 0 and at most {MAX_POSITION_USDC} (6 decimal places)."]
        clean["max_total_exposure_usdc"] = amount
    if problems:
        first = next(iter(problems))
        raise errors.ValidationFailed(f"Invalid {first}: {problems[first][0]}", fields=problems)
    return clean


def with_defaults(user_id: UUID, clean: dict[str, Any]) -> dict[str, Any]:
    """The fields of a new config: ``clean`` plus the defaults of what it leaves out."""
    full = {
        "target_name": "", "price_deviation_bps": DEFAULT_DEVIATION_BPS,
        "blocked_categories": [], "take_profit_bps": None, "stop_loss_bps": None,
        **RULE_DEFAULTS, **clean,
    }
    return _with_paper_default(user_id, sizing_as_set(full))


def sizing_as_set(clean: dict[str, Any], stored: Mapping[str, Any] | None = None
                  ) -> dict[str, Any]:
    """``clean`` keeping only the sizing mode in force: a fixed amount keeps no multiplier
    (1 is stored, which nothing reads), the other modes no fixed amount. ``stored`` is the
    config an edit applies to; leaving the fixed mode needs a multiplier again."""
    before = stored or {}
    mode = clean.get("sizing_mode") or before.get("sizing_mode") or "multiplier"
    if mode == "fixed_usdc":
        if stored is None or "size_multiplier" in clean or before.get("sizing_mode") != mode:
            clean["size_multiplier"] = Decimal(1)  # a stale multiplier is dropped
        return clean
    if "fixed_usdc" not in clean and before.get("fixed_usdc") is not None:
        clean["fixed_usdc"] = None  # switching away from a fixed amount clears it
    if before.get("sizing_mode") == "fixed_usdc" and clean.get("size_multiplier") is None:
        raise errors.ValidationFailed(
            f"Invalid size_multiplier: required to leave sizing_mode fixed_usdc for {mode}.",
            fields={"size_multiplier": [
                f"Required to leave sizing_mode fixed_usdc for {mode} (none was kept)."]})
    return clean


def _with_paper_default(user_id: UUID, full: dict[str, Any]) -> dict[str, Any]:
    if full.get("paper_trading") is None:
        # A new target runs on paper first (the spec's advice made the default).
        full["paper_trading"] = not _has_copied_before(user_id, full["target_address"])
    return full


def _has_copied_before(user_id: UUID, target: str) -> bool:
    return CopyConfig.select().where(CopyConfig.user == user_id,
                                     CopyConfig.target_address == target).exists()
