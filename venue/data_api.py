"""Data API: a wallet's activity and trades (maker and taker fills), positions, leaderboard.

The v1 ``/trades`` endpoint serves each fill once, on its taker side, unless told
``takerOnly=false``; a copied wallet that rests limit orders trades as maker, so every
trade query here sends ``takerOnly=false`` by default. ``/activity`` lists the wallet's own
rows (maker or taker) and supports ``start``/``end``/``offset`` for polling; the v2 routes
page with an opaque cursor.
"""

from __future__ import annotations

from collections.abc import Sequence

from venue.gamma import Returns, Runner
from venue.http import Call, VenueRequest, query
from venue.models import ActivityItem, ActivityPage, LeaderboardEntry, Position, PositionPage
from venue.parse import data_api as parse


def _csv(values: Sequence[str] | str | None) -> str | None:
    if values is None:
        return None
    return values if isinstance(values, str) else ",".join(values)


class DataApi:
    """Data API endpoints (public, no auth)."""

    def __init__(self, run: Runner) -> None:
        self._run = run

    def activity(
        self,
        user: str,
        *,
        types: Sequence[str] | str | None = None,
        start: int | None = None,
        end: int | None = None,
        side: str | None = None,
        market: Sequence[str] | str | None = None,
        limit: int = 100,
        offset: int = 0,
        sort_by: str = "TIMESTAMP",
        sort_direction: str = "DESC",
    ) -> Returns[list[ActivityItem]]:
        """``GET /activity``: the wallet's rows (TRADE, REDEEM, ...) newest first by default.

        ``start``/``end`` are unix seconds (inclusive); poll with ``start`` = last seen
        timestamp and de-duplicate on ``ActivityItem.dedup_key``.
        """
        params = query(
            user=user, type=_csv(types), start=start, end=end, side=side,
            market=_csv(market), limit=limit, offset=offset, sortBy=sort_by,
            sortDirection=sort_direction,
        )
        return self._run(Call(VenueRequest("data", "GET", "/activity", params),
                              parse.parse_activity))

    def trades(
        self,
        *,
        user: str | None = None,
        market: Sequence[str] | str | None = None,
        side: str | None = None,
        taker_only: bool = False,
        filter_type: str | None = None,
        filter_amount: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> Returns[list[ActivityItem]]:
        """``GET /trades`` with ``takerOnly=false`` unless asked: maker AND taker fills."""
        params = query(
            user=user, market=_csv(market), side=side, takerOnly=taker_only,
            filterType=filter_type, filterAmount=filter_amount, limit=limit, offset=offset,
        )
        return self._run(Call(VenueRequest("data", "GET", "/trades", params),
                              parse.parse_activity))

    def activity_page(
        self,
        user: str,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        start: int | None = None,
        end: int | None = None,
        types: Sequence[str] | str | None = None,
    ) -> Returns[ActivityPage]:
        """``GET /v2/activity``: one cursor page (pass ``next_cursor`` back for the next)."""
        params = query(user=user, cursor=cursor, limit=None if cursor else limit,
                       start=start, end=end, type=_csv(types))
        return self._run(Call(VenueRequest("data", "GET", "/v2/activity", params),
                              parse.parse_activity_page))

    def trades_page(
        self,
        *,
        user: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
        start: int | None = None,
        end: int | None = None,
        taker_only: bool = False,
    ) -> Returns[ActivityPage]:
        """``GET /v2/trades`` with ``taker_only=false``: one cursor page of fills."""
        params = query(user=user, cursor=cursor, limit=None if cursor else limit,
                       start=start, end=end, taker_only=taker_only)
        return self._run(Call(VenueRequest("data", "GET", "/v2/trades", params),
                              parse.parse_activity_page))

    def positions(
        self,
        user: str,
        *,
        market: Sequence[str] | str | None = None,
        size_threshold: str | None = None,
        redeemable: bool | None = None,
        mergeable: bool | None = None,
        limit: int = 100,
        offset: int = 0,
        sort_by: str | None = None,
        sort_direction: str | None = None,
    ) -> Returns[list[Position]]:
        """``GET /positions``: the wallet's outcome-token holdings."""
        params = query(
            user=user, market=_csv(market), sizeThreshold=size_threshold,
            redeemable=redeemable, mergeable=mergeable, limit=limit, offset=offset,
            sortBy=sort_by, sortDirection=sort_direction,
        )
        return self._run(Call(VenueRequest("data", "GET", "/positions", params),
                              parse.parse_positions))

    def positions_page(
        self,
        user: str,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        size_threshold: str | None = None,
        status: str | None = None,
    ) -> Returns[PositionPage]:
        """``GET /v2/positions``: one cursor page, each row with its ``status`` (§12)."""
        params = query(user=user, cursor=cursor, limit=None if cursor else limit,
                       size_threshold=size_threshold, status=status)
        return self._run(Call(VenueRequest("data", "GET", "/v2/positions", params),
                              parse.parse_position_page))

    def leaderboard(
        self,
        *,
        time_period: str = "WEEK",
        order_by: str = "PNL",
        category: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> Returns[list[LeaderboardEntry]]:
        """``GET /v1/leaderboard`` (time_period DAY/WEEK/MONTH/ALL, order_by PNL/VOL)."""
        params = query(timePeriod=time_period, orderBy=order_by, category=category,
                       limit=limit, offset=offset)
        return self._run(Call(VenueRequest("data", "GET", "/v1/leaderboard", params),
                              parse.parse_leaderboard, cache_key=f"data:lb:{params}",
                              cache_ttl=60.0))
