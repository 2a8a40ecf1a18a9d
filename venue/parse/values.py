"""Reading venue JSON values: exact decimals, integers, times and arrays, once for every API.

JSON numbers become Decimal from their exact text; a body we cannot read raises
``MalformedResponse``, which the transport treats as the venue being unavailable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from venue.errors import VenueUnavailable


class MalformedResponse(VenueUnavailable):
    """The venue answered with a body we cannot read; treated as unavailable."""


def loads(text: str | bytes) -> Any:
    """Decode JSON with every non-integer number as an exact Decimal."""
    try:
        return json.loads(text, parse_float=Decimal)
    except ValueError as exc:
        raise MalformedResponse(f"venue sent invalid JSON: {exc}") from exc


def dec(value: Any) -> Decimal | None:
    """Decimal from a JSON number or decimal string; None for null or ``""``."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise MalformedResponse(f"expected a number, got {value!r}")
    if isinstance(value, Decimal):
        return value
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        # Only reachable when a caller decoded without parse_float; repr is the shortest exact
        # text of what the venue sent.
        return Decimal(repr(value))
    try:
        return Decimal(str(value).strip())
    except InvalidOperation as exc:
        raise MalformedResponse(f"expected a decimal, got {value!r}") from exc


def req_dec(value: Any) -> Decimal:
    """Like ``dec`` but a missing value reads as zero (Data API ``price: 0`` rows)."""
    result = dec(value)
    return Decimal(0) if result is None else result


def opt_int(value: Any) -> int | None:
    """Integer from a JSON number or string; None for null or ``""``."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise MalformedResponse(f"expected an integer, got {value!r}")
    if isinstance(value, Decimal):
        return int(value)
    return int(value)


def parse_time(value: Any) -> datetime | None:
    """UTC datetime from Gamma's ISO-8601 or ``YYYY-MM-DD HH:MM:SS+00`` or bare-date text."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def json_list(value: Any) -> list[Any]:
    """A list that Gamma may send as a real array or as a JSON-encoded string."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        decoded = loads(value)
        if not isinstance(decoded, list):
            raise MalformedResponse(f"expected a JSON array string, got {value!r}")
        return decoded
    if isinstance(value, list):
        return value
    raise MalformedResponse(f"expected an array, got {value!r}")


def as_text(value: Any) -> str:
    """The value as text; ``""`` for null."""
    return "" if value is None else str(value)


def pick(row: Mapping[str, Any], *keys: str) -> Any:
    """First present key: lets one parser read v1 camelCase and v2 snake_case."""
    for key in keys:
        if key in row:
            return row[key]
    return None


def require_mapping(value: Any, what: str) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else MalformedResponse naming ``what``."""
    if not isinstance(value, Mapping):
        raise MalformedResponse(f"expected an object for {what}, got {type(value).__name__}")
    return value


def require_list(value: Any, what: str) -> list[Any]:
    """``value`` when it is a JSON array, else MalformedResponse naming ``what``."""
    if not isinstance(value, list):
        raise MalformedResponse(f"expected an array for {what}, got {type(value).__name__}")
    return value
