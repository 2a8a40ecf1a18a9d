"""Websocket frames -> models: the CLOB market channel's book events and RTDS trades."""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from venue.models import ActivityItem, LastTradePrice, OrderBook, PriceChange, TickSizeChange
from venue.parse.clob import parse_book
from venue.parse.data_api import parse_activity_item
from venue.parse.values import (
    MalformedResponse,
    as_text,
    dec,
    opt_int,
    req_dec,
    require_mapping,
)

# --- CLOB market channel -------------------------------------------------------------------


def parse_price_changes(body: Any) -> list[PriceChange]:
    """CLOB market-channel ``price_change`` message -> one entry per changed level."""
    body = require_mapping(body, "price_change")
    timestamp = opt_int(body.get("timestamp")) or 0
    return [
        PriceChange(
            market=as_text(body.get("market")),
            asset_id=as_text(c.get("asset_id")),
            price=req_dec(c.get("price")),
            size=req_dec(c.get("size")),
            side=as_text(c.get("side")).upper(),
            hash=as_text(c.get("hash")),
            best_bid=dec(c.get("best_bid")),
            best_ask=dec(c.get("best_ask")),
            timestamp_ms=timestamp,
        )
        for c in body.get("price_changes") or ()
    ]


def parse_last_trade_price(body: Any) -> LastTradePrice:
    """CLOB market-channel ``last_trade_price`` message."""
    body = require_mapping(body, "last_trade_price")
    return LastTradePrice(
        market=as_text(body.get("market")),
        asset_id=as_text(body.get("asset_id")),
        price=req_dec(body.get("price")),
        size=req_dec(body.get("size")),
        side=as_text(body.get("side")).upper(),
        fee_rate_bps=opt_int(body.get("fee_rate_bps")) or 0,
        timestamp_ms=opt_int(body.get("timestamp")) or 0,
        transaction_hash=as_text(body.get("transaction_hash")),
    )


def parse_tick_size_change(body: Any) -> TickSizeChange:
    """CLOB market-channel ``tick_size_change`` message."""
    body = require_mapping(body, "tick_size_change")
    new = dec(body.get("new_tick_size"))
    if new is None:
        raise MalformedResponse("tick_size_change without new_tick_size")
    return TickSizeChange(
        market=as_text(body.get("market")),
        asset_id=as_text(body.get("asset_id")),
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
