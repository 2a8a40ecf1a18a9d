"""Field types shared by every schema: DecimalString above all."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from marshmallow import ValidationError, fields

DECIMAL_PATTERN = r"^-?[0-9]+(\.[0-9]+)?$"
_DECIMAL_RE = re.compile(DECIMAL_PATTERN)


def format_decimal(value: Decimal) -> str:
    """A Decimal as a plain decimal string: no exponent, no trailing zeros."""
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "") else text


class DecimalString(fields.Field):
    """Money and quantities on the wire: a string like ``"12.5"``, a ``Decimal`` in Python.

    Input must be a JSON string (a JSON number would already be a float);
    ``places`` bounds the fractional digits, ``positive`` refuses zero and less.
    """

    default_error_messages = {
        "invalid": 'Must be a decimal string such as "12.5".',
        "places": "At most {places} decimal places.",
        "positive": "Must be greater than 0.",
    }

    def __init__(self, *, places: int | None = None, positive: bool = False,
                 **kwargs: Any) -> None:
        self.places = places
        self.positive = positive
        metadata = kwargs.pop("metadata", {})
        metadata.setdefault("pattern", DECIMAL_PATTERN)
        metadata.setdefault("example", "12.5")
        super().__init__(metadata=metadata, **kwargs)

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> str | None:
        if value is None:
            return None
        return format_decimal(Decimal(value) if not isinstance(value, Decimal) else value)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Decimal:
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise self.make_error("invalid")
        text = str(value)
        if not _DECIMAL_RE.match(text):
            raise self.make_error("invalid")
        try:
            amount = Decimal(text)
        except InvalidOperation as exc:  # pragma: no cover - the pattern already holds
            raise self.make_error("invalid") from exc
        if self.places is not None and "." in text and len(text.split(".")[1]) > self.places:
            raise self.make_error("places", places=self.places)
        if self.positive and amount <= 0:
            raise self.make_error("positive")
        return amount


def decimal_string_property(converter: Any, field: fields.Field, **kwargs: Any) -> dict[str, Any]:
    """apispec attribute function: document DecimalString as a patterned string."""
    if isinstance(field, DecimalString):
        # This runs after apispec's own nullable handling, so restate it (OpenAPI 3.1 form);
        # otherwise an allow_none DecimalString would be documented as never null.
        kind: str | list[str] = ["string", "null"] if field.allow_none else "string"
        return {"type": kind, "pattern": DECIMAL_PATTERN, "format": "decimal"}
    return {}


__all__ = ["DECIMAL_PATTERN", "DecimalString", "ValidationError", "format_decimal"]
