"""One page of a list: the only paging rule, shared by every service whose list paginates.

``paginate(query, limit, offset)`` reads one row past the page to know whether another
page exists, so ``has_next`` is exact (a full last page reports false). Surfaces turn a
Page into the ``X-Pagination-*`` headers (REST) or a ``pagination`` object (MCP).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import peewee

from services.platform import errors

T = TypeVar("T")

DEFAULT_LIMIT = 50
MAX_LIMIT = 1000


@dataclass(frozen=True)
class Page(Generic[T]):
    """Items of one page and where it sits."""

    items: Sequence[T]
    limit: int
    offset: int
    has_next: bool

    def map(self, convert: Callable[[T], Any]) -> Page[Any]:
        """The same page with each item converted."""
        return Page([convert(item) for item in self.items], self.limit, self.offset,
                    self.has_next)

    def meta(self) -> dict[str, Any]:
        """The Pagination object: limit, offset, has_next."""
        return {"limit": self.limit, "offset": self.offset, "has_next": self.has_next}


def check(limit: int, offset: int) -> None:
    """ValidationFailed unless 1 <= limit <= 1000 and offset >= 0."""
    if not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise errors.ValidationFailed(fields={"limit": [f"Must be between 1 and {MAX_LIMIT}."]})
    if not isinstance(offset, int) or offset < 0:
        raise errors.ValidationFailed(fields={"offset": ["Must be 0 or more."]})


def paginate(query: peewee.Query, limit: int = DEFAULT_LIMIT, offset: int = 0) -> Page[Any]:
    """One page of an ordered query."""
    check(limit, offset)
    rows = list(query.limit(limit + 1).offset(offset))
    return Page(rows[:limit], limit, offset, len(rows) > limit)
