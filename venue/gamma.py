"""Gamma API (market metadata): markets, events, tags and public search.

Written once for both transports: each method describes a ``Call`` and hands it to the
runner, so on ``VenueClient`` it returns the value and on ``AsyncVenueClient`` an awaitable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

from venue.errors import VenueNotFound
from venue.http import Call, VenueRequest, query
from venue.models import Event, Market, SearchResult, Tag
from venue.parse import gamma as parse

T = TypeVar("T")
Returns = T | Awaitable[T]  # the value (sync runner) or an awaitable of it (async runner)
Runner = Callable[[Call[Any]], Any]


def _first_market(rows: Any) -> Market:
    markets = parse.parse_markets(rows)
    if not markets:
        raise VenueNotFound("no such market")
    return markets[0]


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

    def market_by_token(self, token_id: str, *, fresh: bool = False) -> Returns[Market]:
        """The market holding CLOB token ``token_id`` (``/markets?clob_token_ids=``);
        ``fresh`` reads Gamma now (and re-caches), e.g. to see a resolution."""
        request = VenueRequest("gamma", "GET", "/markets",
                               query(clob_token_ids=token_id, include_tag=True))
        return self._run(Call(request, _first_market, cache_key=f"gamma:token:{token_id}",
                              refresh=fresh))

    def markets(
        self,
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
        limit: int | None = None,
        offset: int | None = None,
        include_tag: bool | None = True,
    ) -> Returns[list[Market]]:
        """``GET /markets`` with filters; list filters repeat the query key."""
        params = query(
            slug=list(slug) if isinstance(slug, list | tuple) else slug,
            id=list(ids) if ids else None,
            condition_ids=list(condition_ids) if condition_ids else None,
            clob_token_ids=list(clob_token_ids) if clob_token_ids else None,
            active=active, closed=closed, archived=archived, tag_id=tag_id,
            related_tags=related_tags, order=order, ascending=ascending,
            limit=limit, offset=offset, include_tag=include_tag,
        )
        return self._run(Call(VenueRequest("gamma", "GET", "/markets", params),
                              parse.parse_markets))

    def events(
        self,
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
        limit: int | None = None,
        offset: int | None = None,
    ) -> Returns[list[Event]]:
        """``GET /events`` with filters."""
        params = query(
            slug=slug, id=list(ids) if ids else None, tag_id=tag_id, tag_slug=tag_slug,
            active=active, closed=closed, archived=archived, order=order,
            ascending=ascending, limit=limit, offset=offset,
        )
        return self._run(Call(VenueRequest("gamma", "GET", "/events", params),
                              parse.parse_events))

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
