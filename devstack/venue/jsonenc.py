"""JSON text for sandbox answers: Decimals become JSON number tokens, never floats.

The Data API and Gamma send many money fields as JSON numbers; Flask's default
provider would turn a Decimal into a string, and a float would lose digits.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

_encode_str = json.encoder.encode_basestring  # escapes like json.dumps(ensure_ascii=False)


def decimal_token(value: Decimal) -> str:
    """Render a Decimal as a plain JSON number token (no exponent, no trailing zeros)."""
    if value == value.to_integral_value():
        return str(value.quantize(Decimal(1)))
    text = format(value.normalize(), "f")
    return text


def dumps(obj: Any) -> str:
    """Serialize obj compactly; Decimal values are emitted as number tokens."""
    parts: list[str] = []
    _write(obj, parts)
    return "".join(parts)


def _write(obj: Any, out: list[str]) -> None:
    if obj is None:
        out.append("null")
    elif obj is True:
        out.append("true")
    elif obj is False:
        out.append("false")
    elif isinstance(obj, str):
        out.append(_encode_str(obj))
    elif isinstance(obj, Decimal):
        out.append(decimal_token(obj))
    elif isinstance(obj, int):
        out.append(str(obj))
    elif isinstance(obj, dict):
        out.append("{")
        first = True
        for key, value in obj.items():
            if not first:
                out.append(",")
            first = False
            out.append(_encode_str(str(key)))
            out.append(":")
            _write(value, out)
        out.append("}")
    elif isinstance(obj, list | tuple):
        out.append("[")
        for index, value in enumerate(obj):
            if index:
                out.append(",")
            _write(value, out)
        out.append("]")
    else:
        raise TypeError(f"cannot serialize {type(obj).__name__}")
