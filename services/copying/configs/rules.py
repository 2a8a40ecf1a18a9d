"""Copy-config rules: the limits, which fields exist and may change, validation, defaults.

``validate_fields`` is the one place config fields are checked (schemas/configs.py and
every surface rely on it); ``with_defaults`` fills what a new config leaves out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.copying import CopyConfig
from services.copying import mirror as copying
from services.platform import errors, venues

ADDRESS_RE = re.compile(r"^0x[0-9a-fA-F]{40}$")
MAX_SIZE_MULTIPLIER = Decimal(100)
MAX_POSITION_USDC = Decimal(1_000_000)
MAX_BPS = 10000
MAX_EXIT_BPS = 1_000_000
MAX_TARGET_NAME = 120
DEFAULT_DEVIATION_BPS = 200

# Fields a PUT may change; the target is fixed for a config's life (create a new one).
EDITABLE_FIELDS: tuple[str, ...] = (
    "target_name", "size_multiplier", "max_position_usdc", "price_deviation_bps",
    "blocked_categories", "take_profit_bps", "stop_loss_bps", "paper_trading",
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
            if raw.get(name) is None:
                problems[name] = ["Missing data for required field."]

    def bad(name: str, message: str) -> None:
        problems.setdefault(name, []).append(message)

    if raw.get("target_address") is not None:
        address = raw["target_address"]
        if not isinstance(address, str) or not ADDRESS_RE.match(address):
            bad("target_address", "Must match ^0x[0-9a-fA-F]{40}$.")
        else:
            clean["target_address"] = address.lower()
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
    if problems:
        first = next(iter(problems))
        raise errors.ValidationFailed(f"Invalid {first}: {problems[first][0]}", fields=problems)
    return clean


def with_defaults(user_id: UUID, clean: dict[str, Any]) -> dict[str, Any]:
    """The fields of a new config: ``clean`` plus the defaults of what it leaves out."""
    full = {
        "target_name": "", "price_deviation_bps": DEFAULT_DEVIATION_BPS,
        "blocked_categories": [], "take_profit_bps": None, "stop_loss_bps": None, **clean,
    }
    if full.get("paper_trading") is None:
        # A new target runs on paper first (the spec's advice made the default).
        full["paper_trading"] = not _has_copied_before(user_id, full["target_address"])
    return full


def _has_copied_before(user_id: UUID, target: str) -> bool:
    return CopyConfig.select().where(CopyConfig.user == user_id,
                                     CopyConfig.target_address == target).exists()
