"""Response headers written from values already known valid: werkzeug's ``set`` and
``setdefault`` without checking each value again."""

from __future__ import annotations

from collections.abc import Iterable

from werkzeug.datastructures import Headers


def set_known(headers: Headers, pairs: Iterable[tuple[str, str]]) -> None:
    """``headers[name] = value`` for each pair; every value a ``str`` without CR or LF."""
    # werkzeug checks each value for newlines and scans the list once per header; ours
    # are constants and numbers, so a header not yet there is appended as it would be.
    items = headers._list  # werkzeug's own list of (name, value) pairs
    present = {name.lower() for name, _ in items}
    for name, value in pairs:
        if name.lower() in present:
            headers.set(name, value)  # replaced in place, later copies removed: werkzeug's
        else:
            items.append((name, value))


def default_known(headers: Headers, pairs: Iterable[tuple[str, str]]) -> None:
    """``headers.setdefault(name, value)`` for each pair; every value a ``str`` without CR or LF."""
    items = headers._list  # werkzeug's own list of (name, value) pairs
    present = {name.lower() for name, _ in items}
    for name, value in pairs:
        if name.lower() not in present:
            items.append((name, value))
