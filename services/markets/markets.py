"""Market discovery shared by REST, MCP and the dashboard: search, details, depth,
price history and top traders. Everything read from the venue passes through its
short-lived metadata cache; markets seen are mirrored into the catalogue.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from services.markets import catalogue, parameters
from services.platform import venues
from services.platform.errors import NotFound, ValidationFailed
from services.platform.pagination import Page
from venue.errors import VenueError, VenueNotFound
from venue.models import Level, Market, OrderBook

log = logging.getLogger(__name__)
CENT = Decimal("0.01")
DEPTH_BANDS = (1, 2, 5)  # cents around the midpoint
HISTORY_INTERVALS = ("1h", "6h", "1d", "1w", "1m", "max")
LEADERBOARD_PERIODS = ("DAY", "WEEK", "MONTH", "ALL")
LEADERBOARD_ORDER = ("PNL", "VOL")


def market_summary(market: Market) -> dict[str, Any]:
    """The fields an agent or a page needs to pick a market and an outcome token."""
    outcomes = [
        {"outcome": label, "token_id": token,
         "price": market.outcome_prices[i] if i < len(market.outcome_prices) else None}
        for i, (label, token) in enumerate(zip(market.outcomes, market.token_ids,
                                               strict=False))
    ]
    return {
        "slug": market.slug,
        "title": market.question,
        "category": market.tags[0].label if market.tags else "",
        "condition_id": market.condition_id,
        "status": market_status(market),
        "outcomes": outcomes,
        "volume": market.volume,
        "liquidity": market.liquidity,
        "end_date": market.end_date,
        "tick_size": market.tick_size,
    }


def tick_size(token_id: str) -> Decimal | None:
    """The market's price tick for an outcome token (the venue's, cached a minute); None
    when the venue cannot say."""
    try:
        return venues.client().clob.tick_size(token_id)
    except (VenueError, OSError) as exc:  # a page still shows the price, at the default tick
        log.info("no tick size for token %s: %s", token_id, exc)
        return None


def market_status(market: Market) -> str:
    """``open``, ``paused`` (not accepting orders), ``closed`` or ``resolved``."""
    if market.closed:
        resolved = any(p in (Decimal(1), Decimal(0)) for p in market.outcome_prices) and \
            sum(market.outcome_prices, Decimal(0)) == 1
        return "resolved" if resolved else "closed"
    if not market.active or not market.accepting_orders:
        return "paused"
    return "open"


def search_markets(query: str, *, limit: int = 20, include_closed: bool = False
                   ) -> list[dict[str, Any]]:
    """Markets whose events match ``query`` on the venue, most relevant first."""
    if not (query or "").strip():
        raise ValidationFailed(fields={"query": ["A non-empty search text is required."]})
    return list(browse_markets(query, active=not include_closed, limit=limit).items)


def _category_tag(category: str) -> str:
    """The venue's tag id of a category named by slug or label; NotFound when none is."""
    wanted = category.strip().lower()
    for tag in venues.client().gamma.tags(limit=1000):
        if wanted in (tag.slug.lower(), tag.label.lower()):
            return tag.id
    raise ValidationFailed(fields={"category": [f"No category {category!r} at the venue."]})


def _in_category(market: Market, category: str | None) -> bool:
    wanted = (category or "").strip().lower()
    return not wanted or any(wanted in (t.slug.lower(), t.label.lower()) for t in market.tags)


def browse_markets(q: str | None = None, *, category: str | None = None, active: bool = True,
                   limit: int = 20, offset: int = 0) -> Page[dict[str, Any]]:
    """One page of markets: matching ``q`` (most relevant first), else by 24 h volume.

    ``category`` keeps one venue category (slug or label); ``active`` keeps markets that
    take orders (false: every market, closed ones included).
    """
    if not 1 <= limit <= 100:
        raise ValidationFailed(fields={"limit": ["Must be between 1 and 100."]})
    if offset < 0:
        raise ValidationFailed(fields={"offset": ["Must be 0 or more."]})
    text = (q or "").strip()
    if text:
        # The venue's search has no offset: read past the page once, then slice.
        wanted = min(offset + limit + 1, 100)
        result = venues.client().gamma.search(text, limit_per_type=wanted,
                                              keep_closed_markets=0 if active else 1)
        found = [m if m.tags else replace(m, tags=event.tags)
                 for event in result.events for m in event.markets
                 if not (active and m.closed) and _in_category(
                     m if m.tags else replace(m, tags=event.tags), category)]
        rows = found[offset:offset + limit + 1]
    else:
        # Gamma's keyset list has no offset (ACCOUNTS.md §12): read up to the page's end
        # and one row past it, then slice.
        rows = venues.client().list_markets(
            active=True if active else None, closed=False if active else None,
            tag_id=_category_tag(category) if category else None,
            order="volume24hr", ascending=False, max_rows=offset + limit + 1)[offset:]
    catalogue.upsert_markets(rows[:limit])
    return Page([market_summary(m) for m in rows[:limit]], limit, offset, len(rows) > limit)


def market_page(slug: str, levels: int = 10) -> dict[str, Any]:
    """A market's details with each outcome's order book depth (``levels`` per side)."""
    details = market_details(slug)
    books = []
    for outcome in details["outcomes"]:
        try:
            depth: dict[str, Any] | None = market_depth(outcome["token_id"], levels)
        except NotFound:  # a closed or resolved market has no book any more
            depth = None
        books.append({"outcome": outcome["outcome"], "token_id": outcome["token_id"],
                      "depth": depth})
    return {**details, "books": books}


def outcome_token(slug: str, outcome: str | None) -> str:
    """The token id of ``outcome`` (its label, any case; the first one when None) in a market."""
    details = market_details(slug)
    outcomes = details["outcomes"]
    if outcome is None:
        return outcomes[0]["token_id"]
    for item in outcomes:
        if item["outcome"].lower() == outcome.strip().lower():
            return item["token_id"]
    raise ValidationFailed(fields={"outcome": [
        f"One of {', '.join(o['outcome'] for o in outcomes)}."]})


def _resolve_market(slug: str | None = None, token_id: str | None = None) -> Market:
    gamma = venues.client().gamma
    try:
        if slug:
            return gamma.market_by_slug(slug)
        if token_id:
            return gamma.market_by_token(token_id)
    except VenueNotFound:
        raise NotFound("No such market.") from None
    raise ValidationFailed(fields={"slug": ["Give a market slug or a token_id."]})


def names(slug: str | None = None, token_id: str | None = None) -> dict[str, str]:
    """How a message names a market (``market_title``, ``outcome``: ``catalogue.named``),
    synced from Gamma first when the catalogue lacks it; best effort, for jobs off the hot
    path (a venue that does not answer leaves the names out, and the slug stands in)."""
    known = catalogue.named(slug, token_id)
    if "market_title" in known or not (slug or token_id):
        return known
    try:
        catalogue.upsert_markets([_resolve_market(slug, token_id)])
    except (VenueError, NotFound):
        log.warning("market %s not synced for a message", slug or token_id, exc_info=True)
        return known
    return catalogue.named(slug, token_id)


def market_details(slug: str | None = None, token_id: str | None = None) -> dict[str, Any]:
    """Status, condition id, outcome tokens with prices, volume, liquidity, trading rules."""
    market = _resolve_market(slug, token_id)
    catalogue.upsert_markets([market])
    details = market_summary(market)
    limits = parameters.of(market)  # the live mts/mos/fd, as orders are checked against
    details.update({
        "description": market.description,
        "neg_risk": market.neg_risk,
        "accepting_orders": market.accepting_orders,
        "tick_size": limits.tick_size,  # the live one, over the summary's Gamma copy
        "min_order_size": limits.min_order_size,
        "best_bid": market.best_bid,
        "best_ask": market.best_ask,
        "last_trade_price": market.last_trade_price,
        "volume_24h": market.volume_24hr,
        "fees_enabled": market.fees_enabled,
        "taker_fee_rate": limits.fees.rate if limits.fees else None,
    })
    return details


def book_depth(book: OrderBook, levels: int = 10) -> dict[str, Any]:
    """Best bid/ask, spread, top levels with cumulative size, liquidity near the midpoint."""
    bids = list(book.bids_best_first())
    asks = list(book.asks_best_first())
    mid = book.midpoint

    def side(rows: list[Level]) -> list[dict[str, Decimal]]:
        total = Decimal(0)
        out = []
        for level in rows[:levels]:
            total += level.size
            out.append({"price": level.price, "size": level.size, "cumulative_size": total})
        return out

    bands = []
    for cents in DEPTH_BANDS:
        width = CENT * cents
        if mid is None:
            bands.append({"within_cents": cents, "bid_usdc": None, "ask_usdc": None})
            continue
        bands.append({
            "within_cents": cents,
            "bid_usdc": sum((lv.price * lv.size for lv in bids if lv.price >= mid - width),
                            Decimal(0)),
            "ask_usdc": sum((lv.price * lv.size for lv in asks if lv.price <= mid + width),
                            Decimal(0)),
        })
    best_bid, best_ask = book.best_bid, book.best_ask
    return {
        "token_id": book.asset_id,
        "best_bid": best_bid,
        "best_ask": best_ask,
        "midpoint": mid,
        "spread": best_ask - best_bid if best_bid is not None and best_ask is not None else None,
        "bids": side(bids),
        "asks": side(asks),
        "liquidity": bands,
        "tick_size": book.tick_size,
        "min_order_size": book.min_order_size,
    }


def market_depth(token_id: str, levels: int = 10) -> dict[str, Any]:
    """The order book of ``token_id`` summarised for sizing an order."""
    if not 1 <= levels <= 100:
        raise ValidationFailed(fields={"levels": ["Must be between 1 and 100."]})
    try:
        book = venues.client().clob.book(token_id)
    except VenueNotFound:
        raise NotFound("No order book for this token.") from None
    return book_depth(book, levels)


def price_history(token_id: str, interval: str = "1d", fidelity: int | None = None
                  ) -> dict[str, Any]:
    """Price points of ``token_id`` with open, latest, high, low and change."""
    if interval not in HISTORY_INTERVALS:
        raise ValidationFailed(fields={"interval": [f"One of {', '.join(HISTORY_INTERVALS)}."]})
    try:
        points = venues.client().clob.prices_history(token_id, interval=interval,
                                                     fidelity=fidelity)
    except VenueNotFound:
        raise NotFound("No price history for this token.") from None
    points = sorted(points, key=lambda p: p.t)
    prices = [p.p for p in points]
    summary: dict[str, Any] = {"token_id": token_id, "interval": interval,
                               "points": [{"at": datetime.fromtimestamp(p.t, UTC), "price": p.p}
                                          for p in points],
                               "open": None, "latest": None, "high": None, "low": None,
                               "change": None, "change_pct": None}
    if prices:
        first, last = prices[0], prices[-1]
        summary.update(open=first, latest=last, high=max(prices), low=min(prices),
                       change=last - first,
                       change_pct=((last - first) / first * 100).quantize(CENT)
                       if first else None)
    return summary


def top_traders(period: str = "WEEK", order_by: str = "PNL", limit: int = 20,
                category: str | None = None) -> list[dict[str, Any]]:
    """The venue's leaderboard: wallets worth following, with PnL and volume."""
    period, order_by = period.upper(), order_by.upper()
    if period not in LEADERBOARD_PERIODS:
        raise ValidationFailed(fields={"period": [f"One of {', '.join(LEADERBOARD_PERIODS)}."]})
    if order_by not in LEADERBOARD_ORDER:
        raise ValidationFailed(fields={"order_by": ["One of PNL, VOL."]})
    if not 1 <= limit <= 50:
        raise ValidationFailed(fields={"limit": ["Must be between 1 and 50."]})
    rows = venues.client().data.leaderboard(time_period=period, order_by=order_by,
                                            category=category, limit=limit)
    return [{"rank": r.rank, "address": r.proxy_wallet, "name": r.user_name,
             "pnl": r.pnl, "volume": r.vol, "verified": r.verified_badge} for r in rows]
