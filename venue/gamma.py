"""Gamma API (market metadata): markets, events, tags and public search.

Written once for both transports: each method describes a ``Call`` and hands it to the
runner, so on ``VenueClient`` it returns the value and on ``AsyncVenueClient`` an awaitable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

from venue.http import Call, VenueRequest, query
from venue.models import Event, KeysetPage, Market, SearchResult, Tag
from venue.parse import gamma as parse

T = TypeVar("T")
Returns = T | Awaitable[T]  # the value (sync runner) or an awaitable of it (async runner)
Runner = Callable[[Call[Any]], Any]
Pairs = tuple[tuple[str, str], ...]  # query pairs (``venue.http.query``)

# Gamma's keyset lists (ACCOUNTS.md §12; nautilus_trader's Polymarket adapter docs): at most
# 100 markets or 500 events a page, and at most 100 ``condition_ids`` a request.
MARKETS_PAGE = 100
EVENTS_PAGE = 500
IDS_PER_REQUEST = 100


def _listed(values: Sequence[str] | str | None) -> list[str] | str | None:
    """A list filter as repeated query keys (a lone string stays one)."""
    if values is None or isinstance(values, str):
        return values
    return list(values) or None


def market_filters(
    *,
    slug: Sequence[str] | str | None = None,
    ids: Sequence[str] | None = None,
    condition_ids: Sequence[str] | None = None,
    clob_token_ids: Sequence[str] | None = None,
    active: bool | None = None,
    closed: bool | None = None,
    archived: bool | None = None,
    tag_id: int | str | None = None,
    related_tags: bool | None = None,
    order: str | None = None,
    ascending: bool | None = None,
    include_tag: bool | None = True,
) -> Pairs:
    """The query of a Gamma market list, without its paging; list filters repeat the key."""
    return query(slug=_listed(slug), id=_listed(ids), condition_ids=_listed(condition_ids),
                 clob_token_ids=_listed(clob_token_ids), active=active, closed=closed,
                 archived=archived, tag_id=tag_id, related_tags=related_tags, order=order,
                 ascending=ascending, include_tag=include_tag)


def event_filters(
    *,
    slug: str | None = None,
    ids: Sequence[str] | None = None,
    tag_id: int | str | None = None,
    tag_slug: str | None = None,
    active: bool | None = None,
    closed: bool | None = None,
    archived: bool | None = None,
    order: str | None = None,
    ascending: bool | None = None,
) -> Pairs:
    """The query of a Gamma event list, without its paging."""
    return query(slug=slug, id=_listed(ids), tag_id=tag_id, tag_slug=tag_slug, active=active,
                 closed=closed, archived=archived, order=order, ascending=ascending)


class GammaApi:
    """Gamma endpoints; market lookups are served from the metadata cache when fresh."""

    def __init__(self, run: Runner) -> None:
        self._run = run

    def market_by_slug(self, slug: str) -> Returns[Market]:
        """``GET /markets/slug/{slug}``; VenueNotFound when unknown."""
        request = VenueRequest("gamma", "GET", f"/markets/slug/{quote(slug, safe='')}",
                               query(include_tag=True))
        return self._run(Call(request, parse.parse_market, cache_key=f"gamma:slug:{slug}"))

    def market_by_id(self, market_id: str) -> Returns[Market]:
        """``GET /markets/{id}``; VenueNotFound when unknown."""
        request = VenueRequest("gamma", "GET", f"/markets/{quote(str(market_id), safe='')}",
                               query(include_tag=True))
        return self._run(Call(request, parse.parse_market, cache_key=f"gamma:id:{market_id}"))

    def markets(self, *, limit: int | None = None, offset: int | None = None,
                **filters: Any) -> Returns[list[Market]]:
        """``GET /markets``: one offset page of ``market_filters`` (``list_markets`` walks)."""
        return self.markets_offset(market_filters(**filters), limit=limit, offset=offset)

    def markets_offset(self, filters: Pairs, *, limit: int | None,
                       offset: int | None) -> Returns[list[Market]]:
        """One offset page of ``GET /markets`` (the list Gamma means to retire: §12)."""
        params = filters + query(limit=limit, offset=offset)
        return self._run(Call(VenueRequest("gamma", "GET", "/markets", params),
                              parse.parse_markets))

    def markets_keyset(self, filters: Pairs, *, limit: int = MARKETS_PAGE,
                       cursor: str | None = None) -> Returns[KeysetPage[Market]]:
        """One page of ``GET /markets/keyset`` (at most 100 a page, no offset)."""
        params = filters + query(limit=min(limit, MARKETS_PAGE), cursor=cursor)
        return self._run(Call(VenueRequest("gamma", "GET", "/markets/keyset", params),
                              parse.parse_market_keyset))

    def events(self, *, limit: int | None = None, offset: int | None = None,
               **filters: Any) -> Returns[list[Event]]:
        """``GET /events``: one offset page of ``event_filters`` (``list_events`` walks)."""
        return self.events_offset(event_filters(**filters), limit=limit, offset=offset)

    def events_offset(self, filters: Pairs, *, limit: int | None,
                      offset: int | None) -> Returns[list[Event]]:
        """One offset page of ``GET /events`` (the list Gamma means to retire: §12)."""
        params = filters + query(limit=limit, offset=offset)
        return self._run(Call(VenueRequest("gamma", "GET", "/events", params),
                              parse.parse_events))

    def events_keyset(self, filters: Pairs, *, limit: int = EVENTS_PAGE,
                      cursor: str | None = None) -> Returns[KeysetPage[Event]]:
        """One page of ``GET /events/keyset`` (at most 500 a page, no offset)."""
        params = filters + query(limit=min(limit, EVENTS_PAGE), cursor=cursor)
        return self._run(Call(VenueRequest("gamma", "GET", "/events/keyset", params),
                              parse.parse_event_keyset))

    def event_by_slug(self, slug: str) -> Returns[Event]:
        """``GET /events/slug/{slug}``; VenueNotFound when unknown."""
        request = VenueRequest("gamma", "GET", f"/events/slug/{quote(slug, safe='')}")
        return self._run(Call(request, parse.parse_event, cache_key=f"gamma:event:{slug}"))

    def tags(self, *, limit: int | None = None, offset: int | None = None) -> Returns[list[Tag]]:
        """``GET /tags`` (categories)."""
        request = VenueRequest("gamma", "GET", "/tags", query(limit=limit, offset=offset))
        return self._run(Call(request, parse.parse_tags, cache_key=f"gamma:tags:{limit}:{offset}"))

    def search(
        self,
        q: str,
        *,
        limit_per_type: int | None = None,
        page: int | None = None,
        events_status: str | None = None,
        keep_closed_markets: int | None = None,
    ) -> Returns[SearchResult]:
        """``GET /public-search?q=`` (events matching text)."""
        params = query(q=q, limit_per_type=limit_per_type, page=page,
                       events_status=events_status, keep_closed_markets=keep_closed_markets)
        return self._run(Call(VenueRequest("gamma", "GET", "/public-search", params),
                              parse.parse_search))
