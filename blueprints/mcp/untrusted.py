"""Third-party text in tool results, marked so an agent can tell our words from a market's.

A tool declares where its result holds text that comes from third parties (market titles,
descriptions, categories and outcome names, trader names, the venue's messages) as paths
(``markets[].title``: ``[]`` steps into each item of a list). ``structuredContent`` stays as
the tool's output schema says; the result's text block carries the same data with each of
those values in the untrusted-data envelope notifications use
(``{"untrusted_data": {"source": "third_party", "text": ...}}``), and
``_meta["com.copytrade/untrusted"]`` lists them as JSON Pointers into
``structuredContent``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from typing import Any

from services.notifications.catalogue import UNTRUSTED_SOURCE, untrusted_data

META_UNTRUSTED = "com.copytrade/untrusted"


def _escape(step: str) -> str:
    return step.replace("~", "~0").replace("/", "~1")


def _walk(data: Any, steps: list[str], at: str) -> Iterator[str]:
    if not steps:
        if isinstance(data, str) and data:
            yield at
        return
    step, rest = steps[0], steps[1:]
    if step.endswith("[]"):
        items = data.get(step[:-2]) if isinstance(data, dict) else None
        if isinstance(items, list):
            base = f"{at}/{_escape(step[:-2])}"
            for index, item in enumerate(items):
                if rest:
                    yield from _walk(item, rest, f"{base}/{index}")
                elif isinstance(item, str) and item:
                    yield f"{base}/{index}"
        return
    if isinstance(data, dict) and step in data:
        yield from _walk(data[step], rest, f"{at}/{_escape(step)}")


def pointers(data: Any, paths: Iterable[str]) -> list[str]:
    """The JSON Pointers of the non-empty strings at ``paths`` in ``data``."""
    return [found for path in paths for found in _walk(data, path.split("."), "")]


def enveloped(data: Any, found: list[str]) -> Any:
    """A copy of ``data`` with the strings at ``found`` (JSON Pointers) in the envelope."""
    marked = copy.deepcopy(data)
    for pointer in found:
        steps = [s.replace("~1", "/").replace("~0", "~") for s in pointer.split("/")[1:]]
        parent = marked
        for step in steps[:-1]:
            parent = parent[int(step)] if isinstance(parent, list) else parent[step]
        last = steps[-1]
        key: Any = int(last) if isinstance(parent, list) else last
        parent[key] = untrusted_data(parent[key])
    return marked


def meta(found: list[str]) -> dict[str, Any]:
    """The result's ``_meta`` entry naming the third-party values."""
    return {"source": UNTRUSTED_SOURCE, "pointers": found}
