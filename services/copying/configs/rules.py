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
from schemas import rule_fields
from services.copying import mirror as copying
from services.platform import errors, venues
from services.platform.addresses import checked_address

MAX_TARGET_NAME = 120

# Every Decimal a config field holds (a preview stores them as text).
DECIMAL_FIELDS: tuple[str, ...] = tuple(r.name for r in rule_fields.RULES
                                        if r.kind in rule_fields.DECIMAL_KINDS)
# JSON lists stored as text on the model.
LIST_FIELDS: tuple[str, ...] = tuple(r.name for r in rule_fields.RULES
                                     if r.kind in rule_fields.LIST_KINDS)
# Fields a PUT may change: the rules, a name and the mode; the target is fixed for a
# config's life (create a new one).
EDITABLE_FIELDS: tuple[str, ...] = ("target_name", "paper_trading", *rule_fields.NAMES)
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
    if "paper_trading" in raw and raw["paper_trading"] is not None:
        if not isinstance(raw["paper_trading"], bool):
            bad("paper_trading", "Must be a boolean.")
        else:
            clean["paper_trading"] = raw["paper_trading"]
    for rule in rule_fields.RULES:
        if rule.name not in raw:
            continue
        value = raw[rule.name]
        if value is None and not (rule.nullable or rule.kind in rule_fields.LIST_KINDS):
            continue  # a rule that is never off keeps its value (or default)
        try:
            clean[rule.name] = rule.clean(value)
        except ValueError as exc:
            bad(rule.name, str(exc))
    if clean.get("blocked_categories"):
        _check_categories(clean, bad)
    if problems:
        first = next(iter(problems))
        raise errors.ValidationFailed(f"Invalid {first}: {problems[first][0]}", fields=problems)
    return clean


def _check_categories(clean: dict[str, Any], bad: Callable[[str, str], None]) -> None:
    """Blocked categories normalised, and each one the venue's."""
    wanted = sorted(copying.normalise_categories(clean["blocked_categories"]))
    known = venue_categories()
    unknown = [v for v in wanted if v not in known]
    if unknown:
        bad("blocked_categories",
            f"Unknown categories {unknown}; the venue's are {sorted(set(known.values()))}.")
    clean["blocked_categories"] = wanted


def check_combination(fields: Mapping[str, Any]) -> None:
    """Refuse (ValidationFailed naming the field) rules that contradict each other.

    ``fields`` is the whole config as it would be: a new one with its defaults, or a stored
    one with an edit applied.
    """
    problems: dict[str, list[str]] = {}

    def get(name: str) -> Any:
        return fields.get(name, rule_fields.DEFAULTS.get(name))

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
    if get("entry_policy") == "max_adds" and get("max_adds_count") is None:
        problems["max_adds_count"] = ["Required with entry_policy max_adds (at least 1)."]
    if problems:
        first = next(iter(problems))
        raise errors.ValidationFailed(f"Invalid {first}: {problems[first][0]}", fields=problems)


# The user's limit across its configs, checked like a config's amounts.
EXPOSURE_LIMIT = rule_fields.RuleField(
    "max_total_exposure_usdc", rule_fields.POSITIVE, None, "exposure limit",
    "pUSD all the user's configs may hold.", "Exposure limit (pUSD)", "limits", nullable=True,
    high=rule_fields.MAX_POSITION_USDC, reasons=("exposure_limit",))


def validate_limits(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The user's limits across its configs (``max_total_exposure_usdc``: null or above 0)."""
    problems = {name: ["Unknown field."] for name in sorted(set(raw) - {"max_total_exposure_usdc"})}
    clean: dict[str, Any] = {}
    if "max_total_exposure_usdc" in raw:
        value = raw["max_total_exposure_usdc"]
        try:
            clean["max_total_exposure_usdc"] = EXPOSURE_LIMIT.clean(value)
        except ValueError as exc:
            problems["max_total_exposure_usdc"] = [str(exc)]
    if problems:
        first = next(iter(problems))
        raise errors.ValidationFailed(f"Invalid {first}: {problems[first][0]}", fields=problems)
    return clean


def with_defaults(user_id: UUID, clean: dict[str, Any]) -> dict[str, Any]:
    """The fields of a new config: ``clean`` plus the defaults of what it leaves out."""
    defaults = rule_fields.rules_of({})
    if "price_deviation_bps" in clean:
        # A single limit given without bands is the limit for every price, as before.
        defaults["price_deviation_bands"] = []
    full = {"target_name": "", **defaults, **clean}
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
