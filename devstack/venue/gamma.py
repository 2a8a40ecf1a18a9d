"""Gamma API (/gamma): markets, events, tags and search, shaped like gamma-api.polymarket.com."""

from __future__ import annotations

import json
from decimal import Decimal

from flask import Blueprint, Response, current_app, request

from devstack.venue.catalog import TAGS, Event, Market
from devstack.venue.list_rules import (
    EVENTS_PAGE,
    IDS_PER_REQUEST,
    MARKETS_PAGE,
    decode_cursor,
    encode_cursor,
)
from devstack.venue.responses import (
    error_response,
    json_response,
    query_bool,
    query_int,
    query_list,
)
from devstack.venue.state import SandboxState, units

bp = Blueprint("sandbox_gamma", __name__)

_TAG_CREATED = "2023-10-24T22:37:50.31Z"


def _state() -> SandboxState:
    return current_app.extensions["sandbox_state"]


def tag_json(category: str) -> dict:
    """A Gamma tag object."""
    tag = TAGS.get(category, {"id": "0", "label": category.title()})
    return {
        "id": tag["id"],
        "label": tag["label"],
        "slug": category,
        "forceShow": False,
        "createdAt": _TAG_CREATED,
        "updatedAt": _TAG_CREATED,
        "requiresTranslation": False,
    }


def _plain(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text


def _liquidity(state: SandboxState, market: Market) -> Decimal:
    book = state.desk.books[market.condition_id]
    total = Decimal(0)
    for order in book.orders():
        total += units(order.remaining) * order.price
    return total.quantize(Decimal("0.0001"))


def market_json(
    state: SandboxState, market: Market, *, with_event: bool = True, nested: bool = False
) -> dict:
    """A Gamma Market object (JSON-in-string outcomes, prices and token ids).

    `nested` is the slimmer form inside an Event (no events, tags or base fees).
    """
    event = state.catalog.events[market.event_id]
    prices = [state.current_price(market, i) for i in (0, 1)]
    if market.winner is None:
        price_texts = [_plain(p) for p in prices]
    else:
        price_texts = ["1" if i == market.winner else "0" for i in (0, 1)]
    bid, ask = state.best_prices(market.token_ids[0])
    liquidity = _liquidity(state, market)
    clob_ids, position_ids = market.gamma_ids()
    data: dict = {
        "id": market.id,
        "question": market.question,
        "conditionId": market.condition_id,
        "slug": market.slug,
        "resolutionSource": "",
        "endDate": market.end_date,
        "liquidity": _plain(liquidity),
        "startDate": market.start_date,
        "image": market.image,
        "icon": market.image,
        "description": market.description,
        "outcomes": json.dumps(list(market.outcomes)),
        "outcomePrices": json.dumps(price_texts),
        "volume": _plain(market.volume),
        "active": market.active,
        "closed": market.closed,
        "marketMakerAddress": "",
        "createdAt": market.created_at,
        "updatedAt": market.created_at,
        "new": False,
        "featured": False,
        "archived": False,
        "restricted": True,
        "groupItemTitle": market.group_item_title,
        "groupItemThreshold": "0",
        "questionID": market.question_id,
        "enableOrderBook": True,
        "orderPriceMinTickSize": market.tick_size,
        "orderMinSize": market.min_order_size,
        "volumeNum": market.volume,
        "liquidityNum": liquidity,
        "endDateIso": market.end_date[:10],
        "startDateIso": market.start_date[:10],
        "hasReviewedDates": True,
        "volume24hr": market.volume,
        "clobTokenIds": json.dumps(list(clob_ids)),
        "umaBond": "500",
        "umaReward": "5",
        "volumeClob": market.volume,
        "liquidityClob": liquidity,
        "acceptingOrders": not market.closed,
        "negRisk": market.neg_risk,
        "negRiskRequestID": "",
    }
    if not nested:  # the samples' markets inside events list neither
        data["positionIds"] = list(position_ids)  # a real array, not JSON text
    if not nested:
        data["makerBaseFee"] = 1000 if market.fees else 0
        data["takerBaseFee"] = 1000 if market.fees else 0
    if market.neg_risk:
        data["negRiskMarketID"] = market.neg_risk_market_id
    if market.seconds_delay:  # the venue sends it on delayed (sports) markets only
        data["secondsDelay"] = market.seconds_delay
    if with_event and not nested:
        data["events"] = [event_json(state, event, with_markets=False)]
    data["ready"] = False
    data["funded"] = False
    data["acceptingOrdersTimestamp"] = market.start_date
    if not nested:
        data["tags"] = [tag_json(market.category)]
    data["cyom"] = False
    data["approved"] = True
    data["rewardsMinSize"] = 50
    data["rewardsMaxSpread"] = Decimal("4.5")
    if bid is not None and ask is not None:
        data["spread"] = ask - bid
    if market.last_trade_price is not None:
        data["lastTradePrice"] = market.last_trade_price
    if bid is not None:
        data["bestBid"] = bid
    if ask is not None:
        data["bestAsk"] = ask
    data["automaticallyActive"] = True
    data["clearBookOnStart"] = True
    data["manualActivation"] = False
    data["negRiskOther"] = False
    data["umaResolutionStatuses"] = (
        json.dumps(["proposed", "resolved"]) if market.winner is not None else "[]"
    )
    if market.winner is not None:
        data["umaResolutionStatus"] = "resolved"
        data["closedTime"] = market.closed_time
    data["pendingDeployment"] = False
    data["deploying"] = False
    data["rfqEnabled"] = False
    data["holdingRewardsEnabled"] = False
    data["feesEnabled"] = market.fees is not None
    data["requiresTranslation"] = False
    data["feeType"] = market.fees.fee_type if market.fees else None
    if market.fees is not None:
        data["feeSchedule"] = {
            "exponent": market.fees.exponent,
            "rate": market.fees.rate,
            "takerOnly": market.fees.taker_only,
            "rebateRate": market.fees.rebate_rate,
        }
    if not nested:
        data["version"] = market.version  # which ids it trades by (ACCOUNTS.md §11)
    return data


def event_json(state: SandboxState, event: Event, *, with_markets: bool = True) -> dict:
    """A Gamma Event object (numbers for liquidity/volume, nested markets)."""
    markets = [state.catalog.markets_by_id[mid] for mid in event.market_ids]
    volume = sum((m.volume for m in markets), Decimal(0))
    liquidity = sum((_liquidity(state, m) for m in markets), Decimal(0))
    closed = all(m.closed for m in markets)
    data: dict = {
        "id": event.id,
        "ticker": event.slug,
        "slug": event.slug,
        "title": event.title,
        "description": event.description,
        "resolutionSource": "",
        "startDate": event.start_date,
        "creationDate": event.created_at,
        "endDate": event.end_date,
        "image": markets[0].image if markets else "",
        "icon": markets[0].image if markets else "",
        "active": True,
        "closed": closed,
        "archived": False,
        "new": False,
        "featured": False,
        "restricted": True,
        "liquidity": liquidity,
        "volume": volume,
        "openInterest": 0,
        "createdAt": event.created_at,
        "updatedAt": event.created_at,
        "competitive": Decimal("0.9"),
        "volume24hr": volume,
        "enableOrderBook": True,
        "liquidityClob": liquidity,
        "negRisk": event.neg_risk,
    }
    if event.neg_risk:
        data["negRiskMarketID"] = event.neg_risk_market_id
    data["commentCount"] = 0
    if with_markets:
        data["markets"] = [market_json(state, m, nested=True) for m in markets]
        data["tags"] = [tag_json(event.category)]
    data["cyom"] = False
    data["showAllOutcomes"] = True
    data["showMarketImages"] = False
    data["enableNegRisk"] = event.neg_risk
    data["automaticallyActive"] = True
    data["negRiskAugmented"] = False
    data["pendingDeployment"] = False
    data["deploying"] = False
    data["requiresTranslation"] = False
    return data


def _tag_matches(category: str) -> bool:
    tag_ids = query_list("tag_id")
    tag_slugs = query_list("tag") + query_list("tag_slug")
    if tag_ids and TAGS.get(category, {}).get("id") not in tag_ids:
        return False
    return not (tag_slugs and category not in tag_slugs)


def _page(items: list) -> list:
    offset = query_int("offset", 0)
    limit = query_int("limit", 500, low=0, high=1000)
    return items[offset : offset + limit]


def _refused(status: int | None, what: str) -> Response | None:
    """The answer of a list the switches turned off, or None."""
    return None if status is None else error_response(f"{what} is not available", status)


def _found_markets(state: SandboxState) -> list[Market]:
    """Markets matching Gamma's common filters (call under the lock)."""
    slugs = set(query_list("slug"))
    ids = set(query_list("id"))
    conditions = {c.lower() for c in query_list("condition_ids")}
    tokens = set(query_list("clob_token_ids"))
    closed = query_bool("closed")
    active = query_bool("active")
    found = []
    for market in state.catalog.markets_by_id.values():
        if slugs and market.slug not in slugs:
            continue
        if ids and market.id not in ids:
            continue
        if conditions and market.condition_id.lower() not in conditions:
            continue
        if tokens and tokens.isdisjoint({*market.token_ids, *sum(market.gamma_ids(), ())}):
            continue
        if closed is not None and market.closed != closed:
            continue
        if active is not None and market.active != active:
            continue
        if not _tag_matches(market.category):
            continue
        found.append(market)
    return found


def _found_events(state: SandboxState) -> list[Event]:
    """Events matching id, slug, closed and tag filters (call under the lock)."""
    slugs = set(query_list("slug"))
    ids = set(query_list("id"))
    closed = query_bool("closed")
    found = []
    for event in state.catalog.events.values():
        payload_closed = all(state.catalog.markets_by_id[m].closed for m in event.market_ids)
        if slugs and event.slug not in slugs:
            continue
        if ids and event.id not in ids:
            continue
        if closed is not None and payload_closed != closed:
            continue
        if not _tag_matches(event.category):
            continue
        found.append(event)
    return found


def _too_many_ids() -> Response | None:
    """The venue takes at most 100 ``condition_ids`` a request (ACCOUNTS.md §12)."""
    if len(query_list("condition_ids")) > IDS_PER_REQUEST:
        return error_response(f"condition_ids: at most {IDS_PER_REQUEST} a request", 400)
    return None


def _keyset_window(items: list, cap: int) -> tuple[list, str | None] | Response:
    """One keyset page of ``items``: at most ``cap`` rows, a cursor and never an offset."""
    if "offset" in request.args:
        return error_response("offset is not supported on keyset lists; use cursor", 400)
    limit = query_int("limit", cap, low=1)
    if limit > cap:
        return error_response(f"limit: at most {cap} a page", 400)
    start = 0
    cursor = request.args.get("cursor")
    if cursor:
        try:
            start = decode_cursor(cursor)
        except ValueError:
            return error_response("invalid cursor", 400)
    end = start + limit
    return items[start:end], encode_cursor(end) if end < len(items) else None


def _keyset_list(key: str, items: list, cap: int, render) -> Response:
    """``{key: [...], "next_cursor": ...}``; no ``next_cursor`` on the last page."""
    window = _keyset_window(items, cap)
    if isinstance(window, Response):
        return window
    rows, cursor = window
    body: dict = {key: [render(item) for item in rows]}
    if cursor is not None:
        body["next_cursor"] = cursor
    return json_response(body)


@bp.get("/markets")
def list_markets():
    """GET /markets with Gamma's common filters (the offset list)."""
    state = _state()
    refused = _refused(state.list_rules.offset_retired, "/markets") or _too_many_ids()
    if refused is not None:
        return refused
    with state.lock:
        return json_response([market_json(state, m) for m in _page(_found_markets(state))])


@bp.get("/markets/keyset")
def list_markets_keyset():
    """GET /markets/keyset: the same filters, at most 100 a page, cursor paging."""
    state = _state()
    refused = _refused(state.list_rules.keyset_refused, "/markets/keyset") or _too_many_ids()
    if refused is not None:
        return refused
    with state.lock:
        return _keyset_list("markets", _found_markets(state), MARKETS_PAGE,
                            lambda m: market_json(state, m))


@bp.get("/markets/<market_id>")
def get_market(market_id: str):
    """GET /markets/{id}."""
    state = _state()
    with state.lock:
        market = state.catalog.markets_by_id.get(market_id)
        if market is None:
            return error_response("market not found", 404)
        # The by-id capture carries no nested events (unlike the /markets list).
        return json_response(market_json(state, market, with_event=False))


@bp.get("/markets/slug/<slug>")
def get_market_by_slug(slug: str):
    """GET /markets/slug/{slug}."""
    state = _state()
    with state.lock:
        market = state.catalog.markets_by_slug.get(slug)
        if market is None:
            return error_response("market not found", 404)
        # The by-id capture carries no nested events (unlike the /markets list).
        return json_response(market_json(state, market, with_event=False))


@bp.get("/events")
def list_events():
    """GET /events with id, slug, closed, active and tag filters (the offset list)."""
    state = _state()
    refused = _refused(state.list_rules.offset_retired, "/events")
    if refused is not None:
        return refused
    with state.lock:
        return json_response([event_json(state, e) for e in _page(_found_events(state))])


@bp.get("/events/keyset")
def list_events_keyset():
    """GET /events/keyset: the same filters, at most 500 a page, cursor paging."""
    state = _state()
    refused = _refused(state.list_rules.keyset_refused, "/events/keyset")
    if refused is not None:
        return refused
    with state.lock:
        return _keyset_list("events", _found_events(state), EVENTS_PAGE,
                            lambda e: event_json(state, e))


@bp.get("/events/<event_id>")
def get_event(event_id: str):
    """GET /events/{id}."""
    state = _state()
    with state.lock:
        event = state.catalog.events.get(event_id)
        if event is None:
            return error_response("event not found", 404)
        return json_response(event_json(state, event))


@bp.get("/events/slug/<slug>")
def get_event_by_slug(slug: str):
    """GET /events/slug/{slug}."""
    state = _state()
    with state.lock:
        event = state.catalog.events_by_slug.get(slug)
        if event is None:
            return error_response("event not found", 404)
        return json_response(event_json(state, event))


@bp.get("/tags")
def list_tags():
    """GET /tags."""
    return json_response([tag_json(category) for category in TAGS])


@bp.get("/public-search")
def public_search():
    """GET /public-search?q=: events whose title, or a market's question, contains q."""
    state = _state()
    needle = request.args.get("q", "").strip().lower()
    limit = query_int("limit_per_type", 10, low=1, high=100)
    with state.lock:
        hits = []
        for event in state.catalog.events.values():
            texts = [event.title, event.slug] + [
                state.catalog.markets_by_id[m].question for m in event.market_ids
            ]
            if needle and any(needle in text.lower() for text in texts):
                hits.append(event)
        body = {
            "events": [event_json(state, e) for e in hits[:limit]],
            "pagination": {"hasMore": len(hits) > limit, "totalResults": len(hits)},
        }
    return json_response(body)
