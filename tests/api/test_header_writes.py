"""blueprints.header_writes: the same header list as werkzeug's set and setdefault give."""

from __future__ import annotations

import pytest
from werkzeug.datastructures import Headers

from blueprints import header_writes

STARTS = [
    [],
    [("Content-Type", "application/json")],
    [("x-ratelimit-limit", "9"), ("Content-Type", "text/plain"), ("X-RateLimit-Limit", "8")],
    [("Referrer-Policy", "no-referrer"), ("X-Content-Type-Options", "other")],
]
PAIRS = [("X-RateLimit-Limit", "500"), ("X-RateLimit-Remaining", "499"),
         ("Referrer-Policy", "same-origin"), ("X-Content-Type-Options", "nosniff")]


@pytest.mark.parametrize("start", STARTS)
def test_set_known_leaves_what_item_assignment_leaves(start):
    ours, theirs = Headers(start), Headers(start)
    header_writes.set_known(ours, PAIRS)
    for name, value in PAIRS:
        theirs[name] = value
    assert ours.to_wsgi_list() == theirs.to_wsgi_list()


@pytest.mark.parametrize("start", STARTS)
def test_default_known_leaves_what_setdefault_leaves(start):
    ours, theirs = Headers(start), Headers(start)
    header_writes.default_known(ours, PAIRS)
    for name, value in PAIRS:
        theirs.setdefault(name, value)
    assert ours.to_wsgi_list() == theirs.to_wsgi_list()
