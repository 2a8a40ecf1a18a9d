"""Market discovery shared by REST, MCP and the dashboard: search, details, depth,
price history and top traders. Everything read from the venue passes through its
short-lived metadata cache; markets seen are mirrored into the catalogue.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

from services.markets import catalogue
from services.platform import venues
from services.platform.errors import NotFound, ValidationFailed
from venue.errors import VenueNotFound
from venue.models import Level, Market, OrderBook

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
        for i, (label, token) in enumerate(zip(market.outcomes, market.clob_token_ids,
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
    }


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
    text = (query or "").strip()
    if not text:
        raise ValidationFailed(fields={"query": ["A non-empty search text is required."]})
    if not 1 <= limit <= 100:
        raise ValidationFailed(fields={"limit": ["Must be between 1 and 100."]})
    result = venues.client().gamma.search(text, limit_per_type=limit,
                                          keep_closed_markets=1 if include_closed else 0)
    # Markets nested in an event carry no tags of their own (as on the real venue):
    # they take their event's, so categories survive into results and the catalogue.
    markets = [m if m.tags else replace(m, tags=event.tags)
               for event in result.events for m in event.markets
               if include_closed or not m.closed]
    catalogue.upsert_markets(markets)
    return [market_summary(m) for m in markets[:limit]]


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


def market_details(slug: str | None = None, token_id: str | None = None) -> dict[str, Any]:
    """Status, condition id, outcome tokens with prices, volume, liquidity, trading rules."""
    market = _resolve_market(slug, token_id)
    catalogue.upsert_markets([market])
    details = market_summary(market)
    details.update({
        "description": market.description,
        "neg_risk": market.neg_risk,
        "accepting_orders": market.accepting_orders,
        "tick_size": market.tick_size,
        "min_order_size": market.min_order_size,
        "best_bid": market.best_bid,
        "best_ask": market.best_ask,
        "last_trade_price": market.last_trade_price,
        "volume_24h": market.volume_24hr,
        "fees_enabled": market.fees_enabled,
        "taker_fee_rate": market.fee_schedule.rate if market.fee_schedule else None,
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
                               "points": [{"t": p.t, "price": p.p} for p in points],
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
