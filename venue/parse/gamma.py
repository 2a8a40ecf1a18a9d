"""Gamma API JSON -> models: tags, markets, events, search.

Gamma sends ``outcomes``/``outcomePrices``/``clobTokenIds`` as JSON-encoded strings
(``positionIds`` as a real array); the market parser reads them as arrays. A market's
``version`` decides which ids it trades by (``venue.models.Market.token_ids``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from venue.models import Event, FeeSchedule, KeysetPage, Market, SearchResult, Tag
from venue.parse.values import (
    MalformedResponse,
    as_text,
    dec,
    json_list,
    opt_int,
    parse_time,
    req_dec,
    require_list,
    require_mapping,
)


def parse_tag(row: Mapping[str, Any]) -> Tag:
    """Gamma tag object."""
    return Tag(id=as_text(row.get("id")), label=as_text(row.get("label")),
               slug=as_text(row.get("slug")))


def parse_tags(rows: Any) -> list[Tag]:
    """Gamma ``/tags`` array."""
    return [parse_tag(r) for r in require_list(rows, "tags")]


def parse_fee_schedule(row: Any) -> FeeSchedule | None:
    """Gamma ``feeSchedule`` object, or None when absent."""
    if not isinstance(row, Mapping):
        return None
    return FeeSchedule(
        rate=req_dec(row.get("rate")),
        exponent=req_dec(row.get("exponent")),
        taker_only=bool(row.get("takerOnly", True)),
        rebate_rate=req_dec(row.get("rebateRate")),
    )


def parse_market(row: Any) -> Market:
    """Gamma Market object (``/markets`` element, ``/markets/{id}``, ``/markets/slug/{s}``)."""
    row = require_mapping(row, "market")
    try:
        outcomes = tuple(str(o) for o in json_list(row.get("outcomes")))
        prices = tuple(req_dec(p) for p in json_list(row.get("outcomePrices")))
        # A V2-only market's CLOB token ids are null (ACCOUNTS.md §12): it trades by
        # positionIds, and a null never becomes a token "None".
        tokens = tuple(str(t) for t in json_list(row.get("clobTokenIds")) if t is not None)
        positions = tuple(str(t) for t in json_list(row.get("positionIds")))
        statuses = tuple(str(s) for s in json_list(row.get("umaResolutionStatuses")))
    except (TypeError, ValueError) as exc:
        raise MalformedResponse(f"bad market arrays: {exc}") from exc
    return Market(
        id=as_text(row.get("id")),
        condition_id=as_text(row.get("conditionId")),
        slug=as_text(row.get("slug")),
        question=as_text(row.get("question")),
        outcomes=outcomes,
        outcome_prices=prices,
        clob_token_ids=tokens,
        active=bool(row.get("active", False)),
        closed=bool(row.get("closed", False)),
        archived=bool(row.get("archived", False)),
        accepting_orders=bool(row.get("acceptingOrders", False)),
        enable_order_book=bool(row.get("enableOrderBook", False)),
        neg_risk=bool(row.get("negRisk", False)),
        neg_risk_market_id=row.get("negRiskMarketID") or None,
        tick_size=dec(row.get("orderPriceMinTickSize")),
        min_order_size=dec(row.get("orderMinSize")),
        best_bid=dec(row.get("bestBid")),
        best_ask=dec(row.get("bestAsk")),
        last_trade_price=dec(row.get("lastTradePrice")),
        liquidity=dec(row.get("liquidity")),
        volume=dec(row.get("volume")),
        volume_24hr=dec(row.get("volume24hr")),
        start_date=parse_time(row.get("startDate")),
        end_date=parse_time(row.get("endDate")),
        description=as_text(row.get("description")),
        image=as_text(row.get("image")),
        icon=as_text(row.get("icon")),
        group_item_title=as_text(row.get("groupItemTitle")),
        tags=tuple(parse_tag(t) for t in row.get("tags") or ()),
        event_slugs=tuple(as_text(e.get("slug")) for e in row.get("events") or ()),
        fees_enabled=bool(row.get("feesEnabled", False)),
        fee_type=row.get("feeType"),
        fee_schedule=parse_fee_schedule(row.get("feeSchedule")),
        uma_resolution_statuses=statuses,
        position_ids=positions,
        version=as_text(row.get("version")),
        raw=row,
    )


def parse_markets(rows: Any) -> list[Market]:
    """Gamma ``/markets`` array."""
    return [parse_market(r) for r in require_list(rows, "markets")]


def parse_event(row: Any) -> Event:
    """Gamma Event object, with its nested markets."""
    row = require_mapping(row, "event")
    return Event(
        id=as_text(row.get("id")),
        slug=as_text(row.get("slug")),
        title=as_text(row.get("title")),
        description=as_text(row.get("description")),
        active=bool(row.get("active", False)),
        closed=bool(row.get("closed", False)),
        archived=bool(row.get("archived", False)),
        neg_risk=bool(row.get("negRisk", False)),
        liquidity=dec(row.get("liquidity")),
        volume=dec(row.get("volume")),
        start_date=parse_time(row.get("startDate")),
        end_date=parse_time(row.get("endDate")),
        markets=tuple(parse_market(m) for m in row.get("markets") or ()),
        tags=tuple(parse_tag(t) for t in row.get("tags") or ()),
        raw=row,
    )


def parse_events(rows: Any) -> list[Event]:
    """Gamma ``/events`` array."""
    return [parse_event(r) for r in require_list(rows, "events")]


def _keyset(body: Any, key: str) -> tuple[list[Any], str | None]:
    """A keyset page's rows under ``key`` and its cursor. The shape is Gamma's as
    Polymarket/agents #227 shows it (``{"markets": [...], "next_cursor": "..."}``) and
    nautilus_trader's Polymarket adapter docs describe it: no ``next_cursor`` on the last
    page, which an empty or null one means too."""
    body = require_mapping(body, f"{key} keyset page")
    cursor = body.get("next_cursor")
    return require_list(body.get(key) or [], key), str(cursor) if cursor else None


def parse_market_keyset(body: Any) -> KeysetPage[Market]:
    """Gamma ``/markets/keyset`` page."""
    rows, cursor = _keyset(body, "markets")
    return KeysetPage(items=tuple(parse_market(r) for r in rows), next_cursor=cursor)


def parse_event_keyset(body: Any) -> KeysetPage[Event]:
    """Gamma ``/events/keyset`` page."""
    rows, cursor = _keyset(body, "events")
    return KeysetPage(items=tuple(parse_event(r) for r in rows), next_cursor=cursor)


def parse_search(body: Any) -> SearchResult:
    """Gamma ``/public-search`` object."""
    body = require_mapping(body, "search")
    pagination = body.get("pagination") or {}
    return SearchResult(
        events=tuple(parse_event(e) for e in body.get("events") or ()),
        tags=tuple(parse_tag(t) for t in body.get("tags") or ()),
        has_more=bool(pagination.get("hasMore", False)),
        total_results=opt_int(pagination.get("totalResults")),
    )
