"""Request bodies as JSON with a nesting bound: deep nesting is a client error, never a crash.

The web process imports py_ecc (through web3), which raises Python's recursion limit to
100,000, so ``json.loads`` of ``[[[[...`` a few hundred thousand deep overflows the C stack
and kills the worker process instead of raising. Bodies are therefore scanned for their
nesting depth *before* any parser sees them; anything past ``MAX_DEPTH`` is refused.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

MAX_DEPTH = 64
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPEN = frozenset(b"[{")


class TooDeep(ValueError):
    """The JSON nests deeper than MAX_DEPTH."""


def too_deep(data: bytes | str) -> bool:
    """Whether ``data`` opens more than MAX_DEPTH arrays/objects at once (not parsed)."""
    raw = data.encode() if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return False  # the common case: cannot be deep
    # brackets inside strings are text; an unterminated string leaves its brackets counted
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    depth = 0
    for byte in brackets:
        depth = depth + 1 if byte in _OPEN else depth - 1
        if depth > MAX_DEPTH:
            return True
    return False


def loads(data: bytes | str) -> Any:
    """Parse JSON (floats as Decimal); TooDeep past MAX_DEPTH, ValueError when not JSON."""
    if too_deep(data):
        raise TooDeep(f"JSON nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(data, parse_float=Decimal)
    except RecursionError as exc:
        raise TooDeep(f"JSON nested deeper than {MAX_DEPTH} levels") from exc
