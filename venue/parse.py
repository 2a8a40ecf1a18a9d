"""Venue JSON -> models. Pure functions; JSON numbers become Decimal from their exact text.

Gamma sends ``outcomes``/``outcomePrices``/``clobTokenIds`` as JSON-encoded strings, the Data
API v1 is camelCase while v2 is snake_case: this module absorbs those differences once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from venue.errors import VenueUnavailable
from venue.models import (
    ActivityItem,
    ActivityPage,
    ApiCreds,
    CancelResult,
    Event,
    FeeSchedule,
    LastTradePrice,
    LeaderboardEntry,
    Level,
    Market,
    OpenOrder,
    OpenOrdersPage,
    OrderBook,
    Position,
    PostOrderResult,
    PriceChange,
    PriceHistoryPoint,
    SearchResult,
    Tag,
    TickSizeChange,
)


class MalformedResponse(VenueUnavailable):
    """The venue answered with a body we cannot read; treated as unavailable."""


def loads(text: str | bytes) -> Any:
    """Decode JSON with every non-integer number as an exact Decimal."""
    try:
        return json.loads(text, parse_float=Decimal)
    except ValueError as exc:
        raise MalformedResponse(f"venue sent invalid JSON: {exc}") from exc


def dec(value: Any) -> Decimal | None:
    """Decimal from a JSON number or decimal string; None for null or ``""``."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise MalformedResponse(f"expected a number, got {value!r}")
    if isinstance(value, Decimal):
        return value
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        # Only reachable when a caller decoded without parse_float; repr is the shortest exact
        # text of what the venue sent.
        return Decimal(repr(value))
    try:
        return Decimal(str(value).strip())
    except InvalidOperation as exc:
        raise MalformedResponse(f"expected a decimal, got {value!r}") from exc


def req_dec(value: Any) -> Decimal:
    """Like ``dec`` but a missing value reads as zero (Data API ``price: 0`` rows)."""
    result = dec(value)
    return Decimal(0) if result is None else result


def opt_int(value: Any) -> int | None:
    """Integer from a JSON number or string; None for null or ``""``."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise MalformedResponse(f"expected an integer, got {value!r}")
    if isinstance(value, Decimal):
        return int(value)
    return int(value)


def parse_time(value: Any) -> datetime | None:
    """UTC datetime from Gamma's ISO-8601 or ``YYYY-MM-DD HH:MM:SS+00`` or bare-date text."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def json_list(value: Any) -> list[Any]:
    """A list that Gamma may send as a real array or as a JSON-encoded string."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        decoded = loads(value)
        if not isinstance(decoded, list):
            raise MalformedResponse(f"expected a JSON array string, got {value!r}")
        return decoded
    if isinstance(value, list):
        return value
    raise MalformedResponse(f"expected an array, got {value!r}")


def _s(value: Any) -> str:
    return "" if value is None else str(value)


def _pick(row: Mapping[str, Any], *keys: str) -> Any:
    """First present key: lets one parser read v1 camelCase and v2 snake_case."""
    for key in keys:
        if key in row:
            return row[key]
    return None


def _require_mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise MalformedResponse(f"expected an object for {what}, got {type(value).__name__}")
    return value


def _require_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise MalformedResponse(f"expected an array for {what}, got {type(value).__name__}")
    return value


# --- Gamma ---------------------------------------------------------------------------------


def parse_tag(row: Mapping[str, Any]) -> Tag:
    """Gamma tag object."""
    return Tag(id=_s(row.get("id")), label=_s(row.get("label")), slug=_s(row.get("slug")))


def parse_tags(rows: Any) -> list[Tag]:
    """Gamma ``/tags`` array."""
    return [parse_tag(r) for r in _require_list(rows, "tags")]


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
    row = _require_mapping(row, "market")
    try:
        outcomes = tuple(str(o) for o in json_list(row.get("outcomes")))
        prices = tuple(req_dec(p) for p in json_list(row.get("outcomePrices")))
        tokens = tuple(str(t) for t in json_list(row.get("clobTokenIds")))
        statuses = tuple(str(s) for s in json_list(row.get("umaResolutionStatuses")))
    except (TypeError, ValueError) as exc:
        raise MalformedResponse(f"bad market arrays: {exc}") from exc
    return Market(
        id=_s(row.get("id")),
        condition_id=_s(row.get("conditionId")),
        slug=_s(row.get("slug")),
        question=_s(row.get("question")),
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
        description=_s(row.get("description")),
        image=_s(row.get("image")),
        icon=_s(row.get("icon")),
        group_item_title=_s(row.get("groupItemTitle")),
        tags=tuple(parse_tag(t) for t in row.get("tags") or ()),
        event_slugs=tuple(_s(e.get("slug")) for e in row.get("events") or ()),
        fees_enabled=bool(row.get("feesEnabled", False)),
        fee_type=row.get("feeType"),
        fee_schedule=parse_fee_schedule(row.get("feeSchedule")),
        uma_resolution_statuses=statuses,
        raw=row,
    )


def parse_markets(rows: Any) -> list[Market]:
    """Gamma ``/markets`` array."""
    return [parse_market(r) for r in _require_list(rows, "markets")]


def parse_event(row: Any) -> Event:
    """Gamma Event object, with its nested markets."""
    row = _require_mapping(row, "event")
    return Event(
        id=_s(row.get("id")),
        slug=_s(row.get("slug")),
        title=_s(row.get("title")),
        description=_s(row.get("description")),
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
    return [parse_event(r) for r in _require_list(rows, "events")]


def parse_search(body: Any) -> SearchResult:
    """Gamma ``/public-search`` object."""
    body = _require_mapping(body, "search")
    pagination = body.get("pagination") or {}
    return SearchResult(
        events=tuple(parse_event(e) for e in body.get("events") or ()),
        tags=tuple(parse_tag(t) for t in body.get("tags") or ()),
        has_more=bool(pagination.get("hasMore", False)),
        total_results=opt_int(pagination.get("totalResults")),
    )


# --- CLOB market data ----------------------------------------------------------------------


def _levels(rows: Iterable[Mapping[str, Any]]) -> tuple[Level, ...]:
    return tuple(Level(price=req_dec(r["price"]), size=req_dec(r["size"])) for r in rows)


def parse_book(body: Any) -> OrderBook:
    """CLOB ``/book`` (or a WS ``book`` message)."""
    body = _require_mapping(body, "book")
    try:
        neg_risk = body.get("neg_risk")
        return OrderBook(
            market=_s(body.get("market")),
            asset_id=_s(body["asset_id"]),
            timestamp_ms=opt_int(body.get("timestamp")) or 0,
            hash=_s(body.get("hash")),
            bids=_levels(body.get("bids") or ()),
            asks=_levels(body.get("asks") or ()),
            min_order_size=dec(body.get("min_order_size")),
            tick_size=dec(body.get("tick_size")),
            neg_risk=None if neg_risk is None else bool(neg_risk),
            last_trade_price=dec(body.get("last_trade_price")),
        )
    except (KeyError, TypeError) as exc:
        raise MalformedResponse(f"bad book: {exc}") from exc


def parse_price_changes(body: Any) -> list[PriceChange]:
    """CLOB market-channel ``price_change`` message -> one entry per changed level."""
    body = _require_mapping(body, "price_change")
    timestamp = opt_int(body.get("timestamp")) or 0
    return [
        PriceChange(
            market=_s(body.get("market")),
            asset_id=_s(c.get("asset_id")),
            price=req_dec(c.get("price")),
            size=req_dec(c.get("size")),
            side=_s(c.get("side")).upper(),
            hash=_s(c.get("hash")),
            best_bid=dec(c.get("best_bid")),
            best_ask=dec(c.get("best_ask")),
            timestamp_ms=timestamp,
        )
        for c in body.get("price_changes") or ()
    ]


def parse_last_trade_price(body: Any) -> LastTradePrice:
    """CLOB market-channel ``last_trade_price`` message."""
    body = _require_mapping(body, "last_trade_price")
    return LastTradePrice(
        market=_s(body.get("market")),
        asset_id=_s(body.get("asset_id")),
        price=req_dec(body.get("price")),
        size=req_dec(body.get("size")),
        side=_s(body.get("side")).upper(),
        fee_rate_bps=opt_int(body.get("fee_rate_bps")) or 0,
        timestamp_ms=opt_int(body.get("timestamp")) or 0,
        transaction_hash=_s(body.get("transaction_hash")),
    )


def parse_tick_size_change(body: Any) -> TickSizeChange:
    """CLOB market-channel ``tick_size_change`` message."""
    body = _require_mapping(body, "tick_size_change")
    new = dec(body.get("new_tick_size"))
    if new is None:
        raise MalformedResponse("tick_size_change without new_tick_size")
    return TickSizeChange(
        market=_s(body.get("market")),
        asset_id=_s(body.get("asset_id")),
        old_tick_size=dec(body.get("old_tick_size")),
        new_tick_size=new,
        timestamp_ms=opt_int(body.get("timestamp")) or 0,
    )


MarketEvent = OrderBook | PriceChange | LastTradePrice | TickSizeChange
# One decoder for every frame: json.loads builds a new one per call when given parse_float,
# which costs about as much as decoding a one-level price_change.
_MARKET_DECODER = json.JSONDecoder(parse_float=Decimal)


def _json_frame(text: str | bytes) -> str | None:
    """A websocket text frame's JSON text, or None for keepalives (PONG, blanks)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    stripped = text.strip()
    return stripped if stripped and stripped[0] in "[{" else None


def parse_market_frame(text: str | bytes) -> list[MarketEvent]:
    """Events of one market-channel text frame in order, one PriceChange per changed level.

    ``[]`` for ``PONG`` and other non-JSON keepalives; event types we do not use are skipped;
    invalid JSON raises MalformedResponse (a book fed from this stream can no longer be trusted).
    """
    stripped = _json_frame(text)
    if stripped is None:
        return []
    try:
        decoded = _MARKET_DECODER.decode(stripped)
    except ValueError as exc:
        raise MalformedResponse(f"venue sent invalid JSON: {exc}") from exc
    events: list[MarketEvent] = []
    for message in decoded if isinstance(decoded, list) else [decoded]:
        if not isinstance(message, Mapping):
            continue
        kind = message.get("event_type")
        if kind == "book":
            events.append(parse_book(message))
        elif kind == "price_change":
            events.extend(parse_price_changes(message))
        elif kind == "last_trade_price":
            events.append(parse_last_trade_price(message))
        elif kind == "tick_size_change":
            events.append(parse_tick_size_change(message))
    return events


def _field_dec(body: Any, *keys: str) -> Decimal:
    body = _require_mapping(body, keys[0])
    value = dec(_pick(body, *keys))
    if value is None:
        raise MalformedResponse(f"missing {keys[0]}")
    return value


def parse_price(body: Any) -> Decimal:
    """CLOB ``/price`` -> the price (a string on the wire)."""
    return _field_dec(body, "price")


def parse_midpoint(body: Any) -> Decimal:
    """CLOB ``/midpoint`` -> ``mid`` (docs say ``mid_price``; accept both)."""
    return _field_dec(body, "mid", "mid_price")


def parse_tick_size(body: Any) -> Decimal:
    """CLOB ``/tick-size`` -> ``minimum_tick_size`` (number or string)."""
    return _field_dec(body, "minimum_tick_size")


def parse_neg_risk(body: Any) -> bool:
    """CLOB ``/neg-risk`` -> ``neg_risk``."""
    body = _require_mapping(body, "neg_risk")
    if "neg_risk" not in body:
        raise MalformedResponse("missing neg_risk")
    return bool(body["neg_risk"])


def parse_fee_rate_bps(body: Any) -> int:
    """CLOB ``/fee-rate`` -> ``base_fee`` in basis points (0 when absent)."""
    body = _require_mapping(body, "fee-rate")
    return opt_int(_pick(body, "base_fee", "fee_rate_bps")) or 0


def parse_prices_history(body: Any) -> list[PriceHistoryPoint]:
    """CLOB ``/prices-history`` -> points of (unix seconds, price)."""
    body = _require_mapping(body, "prices-history")
    return [
        PriceHistoryPoint(t=int(p["t"]), p=req_dec(p["p"])) for p in body.get("history") or ()
    ]


def parse_server_time(body: Any) -> int:
    """CLOB ``/time`` -> unix seconds (a bare number, or an object on some deployments)."""
    if isinstance(body, Mapping):
        body = _pick(body, "time", "timestamp")
    value = opt_int(body)
    if value is None:
        raise MalformedResponse("missing server time")
    return value


def parse_version(body: Any) -> int:
    """CLOB ``/version`` -> ``version``."""
    body = _require_mapping(body, "version")
    return opt_int(body.get("version")) or 0


# --- CLOB auth and trading -----------------------------------------------------------------


def parse_api_creds(body: Any, address: str) -> ApiCreds:
    """``/auth/api-key`` or ``/auth/derive-api-key`` answer, bound to the signer address."""
    body = _require_mapping(body, "api creds")
    try:
        return ApiCreds(
            api_key=str(body["apiKey"]),
            secret=str(body["secret"]),
            passphrase=str(body["passphrase"]),
            address=address,
        )
    except KeyError as exc:
        raise MalformedResponse(f"api creds missing {exc}") from exc


def parse_open_order(row: Any) -> OpenOrder:
    """One ``/data/orders`` record (or ``/data/order/{id}``)."""
    row = _require_mapping(row, "order")
    return OpenOrder(
        id=_s(row.get("id")),
        status=_s(row.get("status")),
        owner=_s(row.get("owner")),
        maker_address=_s(row.get("maker_address")),
        market=_s(row.get("market")),
        asset_id=_s(row.get("asset_id")),
        side=_s(row.get("side")).upper(),
        original_size=req_dec(row.get("original_size")),
        size_matched=req_dec(row.get("size_matched")),
        price=req_dec(row.get("price")),
        outcome=_s(row.get("outcome")),
        expiration=opt_int(row.get("expiration")) or 0,
        order_type=_s(row.get("order_type")),
        associate_trades=tuple(str(t) for t in row.get("associate_trades") or ()),
        created_at=opt_int(row.get("created_at")) or 0,
    )


def parse_open_orders(body: Any) -> OpenOrdersPage:
    """``/data/orders`` envelope ``{limit, next_cursor, count, data}`` (or a bare array)."""
    if isinstance(body, list):
        return OpenOrdersPage(orders=tuple(parse_open_order(r) for r in body), next_cursor="LTE=")
    body = _require_mapping(body, "orders")
    return OpenOrdersPage(
        orders=tuple(parse_open_order(r) for r in body.get("data") or ()),
        next_cursor=_s(body.get("next_cursor")) or "LTE=",
    )


def parse_post_order(body: Any) -> PostOrderResult:
    """``POST /order`` answer."""
    body = _require_mapping(body, "post order")
    return PostOrderResult(
        success=bool(body.get("success", False)),
        order_id=_s(body.get("orderID")),
        status=_s(body.get("status")).lower(),
        making_amount=dec(body.get("makingAmount")),
        taking_amount=dec(body.get("takingAmount")),
        error_msg=_s(body.get("errorMsg")),
        transactions_hashes=tuple(str(h) for h in body.get("transactionsHashes") or ()),
        trade_ids=tuple(str(t) for t in body.get("tradeIDs") or ()),
    )


def parse_cancel(body: Any) -> CancelResult:
    """Cancel answer ``{canceled: [...], not_canceled: {id: reason}}``."""
    body = _require_mapping(body, "cancel")
    not_canceled = body.get("not_canceled") or {}
    return CancelResult(
        canceled=tuple(str(i) for i in body.get("canceled") or ()),
        not_canceled={str(k): str(v) for k, v in dict(not_canceled).items()},
    )


# --- Data API ------------------------------------------------------------------------------


def parse_activity_item(row: Any, default_type: str = "TRADE") -> ActivityItem:
    """A Data API v1/v2 activity or trade row, or an RTDS trade payload."""
    row = _require_mapping(row, "activity")
    role = _pick(row, "role", "traderSide", "trader_side")
    fee = _pick(row, "fee", "fee_usdc", "feeUsdc")
    return ActivityItem(
        proxy_wallet=_s(_pick(row, "proxyWallet", "proxy_wallet")),
        timestamp=opt_int(row.get("timestamp")) or 0,
        condition_id=_s(_pick(row, "conditionId", "condition_id")),
        type=_s(row.get("type")) or default_type,
        asset=_s(_pick(row, "asset", "token_id", "asset_id")),
        side=_s(row.get("side")).upper(),
        size=req_dec(row.get("size")),
        price=req_dec(row.get("price")),
        usdc_size=dec(_pick(row, "usdcSize", "usdc_size")),
        outcome=_s(row.get("outcome")),
        outcome_index=opt_int(_pick(row, "outcomeIndex", "outcome_index")),
        transaction_hash=_s(_pick(row, "transactionHash", "transaction_hash")),
        title=_s(row.get("title")),
        slug=_s(row.get("slug")),
        event_slug=_s(_pick(row, "eventSlug", "event_slug")),
        name=_s(row.get("name")),
        pseudonym=_s(row.get("pseudonym")),
        fee=dec(fee),
        role=str(role).lower() if role else None,
    )


def parse_activity(rows: Any) -> list[ActivityItem]:
    """Data API v1 ``/activity`` or ``/trades`` array."""
    return [parse_activity_item(r) for r in _require_list(rows, "activity")]


def parse_activity_page(body: Any) -> ActivityPage:
    """Data API v2 envelope ``{data, pagination:{has_more, next_cursor}}``."""
    if isinstance(body, list):
        return ActivityPage(items=tuple(parse_activity(body)), next_cursor=None, has_more=False)
    body = _require_mapping(body, "activity page")
    pagination = body.get("pagination") or {}
    return ActivityPage(
        items=tuple(parse_activity_item(r) for r in body.get("data") or ()),
        next_cursor=pagination.get("next_cursor") or None,
        has_more=bool(pagination.get("has_more", False)),
    )


def parse_position(row: Any) -> Position:
    """A Data API v1 (camelCase) or v2 (snake_case) position row."""
    row = _require_mapping(row, "position")
    return Position(
        proxy_wallet=_s(_pick(row, "proxyWallet", "proxy_wallet")),
        asset=_s(_pick(row, "asset", "token_id")),
        condition_id=_s(_pick(row, "conditionId", "condition_id")),
        size=req_dec(_pick(row, "size", "current_size")),
        avg_price=req_dec(_pick(row, "avgPrice", "avg_price")),
        initial_value=dec(_pick(row, "initialValue", "total_cost_usdc")),
        current_value=req_dec(_pick(row, "currentValue", "current_value")),
        cash_pnl=dec(_pick(row, "cashPnl", "unrealized_pnl")),
        realized_pnl=dec(_pick(row, "realizedPnl", "realized_pnl")),
        cur_price=req_dec(_pick(row, "curPrice", "current_price")),
        redeemable=bool(row.get("redeemable", False)),
        mergeable=bool(row.get("mergeable", False)),
        title=_s(row.get("title")),
        slug=_s(row.get("slug")),
        event_slug=_s(_pick(row, "eventSlug", "event_slug")),
        outcome=_s(row.get("outcome")),
        outcome_index=opt_int(_pick(row, "outcomeIndex", "outcome_index")),
        opposite_outcome=_s(_pick(row, "oppositeOutcome", "opposite_outcome")),
        opposite_asset=_s(_pick(row, "oppositeAsset", "opposite_token_id")),
        end_date=_s(_pick(row, "endDate", "end_date")),
        negative_risk=bool(_pick(row, "negativeRisk", "negative_risk") or False),
    )


def parse_positions(body: Any) -> list[Position]:
    """Data API ``/positions`` array or v2 ``{data: [...]}`` envelope."""
    if isinstance(body, Mapping):
        body = body.get("data") or []
    return [parse_position(r) for r in _require_list(body, "positions")]


def parse_leaderboard(rows: Any) -> list[LeaderboardEntry]:
    """Data API ``/v1/leaderboard`` array (``rank`` is a string on the wire)."""
    return [
        LeaderboardEntry(
            rank=opt_int(r.get("rank")) or 0,
            proxy_wallet=_s(r.get("proxyWallet")),
            user_name=_s(r.get("userName")),
            x_username=_s(r.get("xUsername")),
            verified_badge=bool(r.get("verifiedBadge", False)),
            vol=req_dec(r.get("vol")),
            pnl=req_dec(r.get("pnl")),
            profile_image=_s(r.get("profileImage")),
        )
        for r in _require_list(rows, "leaderboard")
    ]


# --- RTDS ----------------------------------------------------------------------------------


def parse_rtds_frame(text: str | bytes) -> list[ActivityItem]:
    """Trades in one RTDS text frame; ``[]`` for pongs, other topics and non-JSON keepalives."""
    stripped = _json_frame(text)
    if stripped is None:
        return []
    try:
        decoded = json.loads(stripped, parse_float=Decimal)
    except ValueError:
        return []
    messages = decoded if isinstance(decoded, list) else [decoded]
    trades: list[ActivityItem] = []
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        if message.get("topic") != "activity" or message.get("type") != "trades":
            continue
        payload = message.get("payload")
        if isinstance(payload, Mapping):
            trades.append(parse_activity_item(payload))
    return trades
