"""The REST face of services/platform/pagination.py: a Page becomes a bare array plus four headers.

Every list that paginates answers through ``paged``, and documents its headers with
``PAGINATION_HEADERS``::

    @blp.response(200, TradeSchema(many=True), headers=PAGINATION_HEADERS)
    def get(self, args):
        return paged(trades.list_trades(user, **args))
"""

from __future__ import annotations

from typing import Any

from services.platform.pagination import Page

PAGINATION_HEADERS = {
    "X-Pagination-Limit": {"description": "The limit applied.", "schema": {"type": "integer"}},
    "X-Pagination-Offset": {"description": "The offset applied.",
                            "schema": {"type": "integer"}},
    "X-Pagination-Count": {"description": "Number of items in this page.",
                           "schema": {"type": "integer"}},
    "X-Pagination-Has-Next": {
        "description": "`true` when another page exists. Exact: the server reads one item "
                       "past the page, so a full last page says `false`.",
        "schema": {"type": "string", "enum": ["true", "false"]}},
}


def headers_for(page: Page[Any]) -> dict[str, str]:
    """The four X-Pagination-* headers of a page."""
    return {
        "X-Pagination-Limit": str(page.limit),
        "X-Pagination-Offset": str(page.offset),
        "X-Pagination-Count": str(len(page.items)),
        "X-Pagination-Has-Next": "true" if page.has_next else "false",
    }


def paged(page: Page[Any]) -> tuple[list[Any], int, dict[str, str]]:
    """A view's return value: the page's items as a bare array, 200, and the headers."""
    return list(page.items), 200, headers_for(page)
