"""Websocket frames -> models: the CLOB market channel's book events and RTDS trades."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
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


# The activity types carrying trades: ``trades``, and ``orders_matched``, which users point
# to where ``trades`` is disabled (ACCOUNTS.md §12: unconfirmed; its payload taken to be
# the same trade).
RTDS_TRADES, RTDS_ORDERS_MATCHED = "trades", "orders_matched"
RTDS_ACTIVITY_TYPES = (RTDS_TRADES, RTDS_ORDERS_MATCHED)


@dataclass(frozen=True, slots=True)
class RtdsFrame:
    """One RTDS text frame's trades, each with its activity type, and the activity types a
    refusal in it names (an error frame answering a subscription)."""

    trades: list[tuple[str, ActivityItem]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def parse_rtds_activity(text: str | bytes) -> RtdsFrame:
    """Trades (by activity type) and refusals in one RTDS text frame; empty for pongs, other
    topics and non-JSON keepalives."""
    found = RtdsFrame()
    stripped = _json_frame(text)
    if stripped is None:
        return found
    try:
        decoded = json.loads(stripped, parse_float=Decimal)
    except ValueError:
        return found
    for message in decoded if isinstance(decoded, list) else [decoded]:
        if not isinstance(message, Mapping) or message.get("topic") != "activity":
            continue
        kind = message.get("type")
        if kind not in RTDS_ACTIVITY_TYPES:
            continue
        if message.get("error"):
            found.refused.append(kind)
            continue
        payload = message.get("payload")
        if isinstance(payload, Mapping):
            found.trades.append((kind, parse_activity_item(payload)))
    return found


def parse_rtds_frame(text: str | bytes) -> list[ActivityItem]:
    """Trades in one RTDS text frame (either activity type); ``[]`` for pongs, other topics
    and non-JSON keepalives."""
    return [trade for _, trade in parse_rtds_activity(text).trades]
