"""Reading the Prometheus text exposition in tests (values parsed as Decimal, never float)."""

from __future__ import annotations

import re
from decimal import Decimal

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\S+)?$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

Key = tuple[str, tuple[tuple[str, str], ...]]


def samples(text: str) -> dict[Key, Decimal]:
    """Every sample of an exposition: (name, sorted labels) -> value."""
    found: dict[Key, Decimal] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        assert match, f"unreadable exposition line: {line!r}"
        labels = tuple(sorted(_LABEL.findall(match.group(3) or "")))
        found[(match.group(1), labels)] = Decimal(match.group(4))
    return found


def total(text: str, name: str, **labels: str) -> Decimal:
    """Sum of the samples of ``name`` whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum((value for (sample, got), value in samples(text).items()
                if sample == name and wanted <= set(got)), Decimal(0))


def names(text: str) -> set[str]:
    """Every sample name present."""
    return {name for name, _ in samples(text)}
