"""Data API JSON -> models: activity and trades, positions, the leaderboard.

The Data API v1 is camelCase while v2 is snake_case: each parser reads both (``pick``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from venue.models import (
    ActivityItem,
    ActivityPage,
    LeaderboardEntry,
    Position,
    PositionPage,
    position_status,
)
from venue.parse.values import (
    as_text,
    dec,
    opt_int,
    pick,
    req_dec,
    require_list,
    require_mapping,
)


def parse_activity_item(row: Any, default_type: str = "TRADE") -> ActivityItem:
    """A Data API v1/v2 activity or trade row, or an RTDS trade payload."""
    row = require_mapping(row, "activity")
    role = pick(row, "role", "traderSide", "trader_side")
    fee = pick(row, "fee", "fee_usdc", "feeUsdc")
    return ActivityItem(
        proxy_wallet=as_text(pick(row, "proxyWallet", "proxy_wallet")),
        timestamp=opt_int(row.get("timestamp")) or 0,
        condition_id=as_text(pick(row, "conditionId", "condition_id")),
        type=as_text(row.get("type")) or default_type,
        asset=as_text(pick(row, "asset", "token_id", "asset_id")),
        side=as_text(row.get("side")).upper(),
        size=req_dec(row.get("size")),
        price=req_dec(row.get("price")),
        usdc_size=dec(pick(row, "usdcSize", "usdc_size")),
        outcome=as_text(row.get("outcome")),
        outcome_index=opt_int(pick(row, "outcomeIndex", "outcome_index")),
        transaction_hash=as_text(pick(row, "transactionHash", "transaction_hash")),
        title=as_text(row.get("title")),
        slug=as_text(row.get("slug")),
        event_slug=as_text(pick(row, "eventSlug", "event_slug")),
        name=as_text(row.get("name")),
        pseudonym=as_text(row.get("pseudonym")),
        fee=dec(fee),
        role=str(role).lower() if role else None,
    )


def parse_activity(rows: Any) -> list[ActivityItem]:
    """Data API v1 ``/activity`` or ``/trades`` array."""
    return [parse_activity_item(r) for r in require_list(rows, "activity")]


def _envelope(body: Any, what: str) -> tuple[list[Any], str | None, bool]:
    """A v2 envelope ``{data, pagination:{has_more, next_cursor}}`` (or a bare v1 array)."""
    if isinstance(body, list):
        return body, None, False
    body = require_mapping(body, what)
    pagination = body.get("pagination") or {}
    return (list(body.get("data") or ()), pagination.get("next_cursor") or None,
            bool(pagination.get("has_more", False)))


def parse_activity_page(body: Any) -> ActivityPage:
    """Data API v2 activity or trades envelope."""
    rows, cursor, more = _envelope(body, "activity page")
    return ActivityPage(items=tuple(parse_activity_item(r) for r in rows),
                        next_cursor=cursor, has_more=more)


def parse_position(row: Any) -> Position:
    """A Data API v1 (camelCase) or v2 (snake_case) position row; any ``status`` is kept."""
    row = require_mapping(row, "position")
    size = req_dec(pick(row, "size", "current_size"))
    price = req_dec(pick(row, "curPrice", "current_price"))
    status = as_text(row.get("status")).strip().upper()
    return Position(
        proxy_wallet=as_text(pick(row, "proxyWallet", "proxy_wallet")),
        asset=as_text(pick(row, "asset", "token_id")),
        condition_id=as_text(pick(row, "conditionId", "condition_id")),
        size=size,
        avg_price=req_dec(pick(row, "avgPrice", "avg_price")),
        initial_value=dec(pick(row, "initialValue", "total_cost_usdc")),
        current_value=req_dec(pick(row, "currentValue", "current_value")),
        cash_pnl=dec(pick(row, "cashPnl", "unrealized_pnl")),
        realized_pnl=dec(pick(row, "realizedPnl", "realized_pnl")),
        cur_price=price,
        redeemable=bool(row.get("redeemable", False)),
        mergeable=bool(row.get("mergeable", False)),
        title=as_text(row.get("title")),
        slug=as_text(row.get("slug")),
        event_slug=as_text(pick(row, "eventSlug", "event_slug")),
        outcome=as_text(row.get("outcome")),
        outcome_index=opt_int(pick(row, "outcomeIndex", "outcome_index")),
        opposite_outcome=as_text(pick(row, "oppositeOutcome", "opposite_outcome")),
        opposite_asset=as_text(pick(row, "oppositeAsset", "opposite_token_id")),
        end_date=as_text(pick(row, "endDate", "end_date")),
        negative_risk=bool(pick(row, "negativeRisk", "negative_risk") or False),
        status=status or position_status(
            redeemable=bool(row.get("redeemable")), mergeable=bool(row.get("mergeable")),
            size=size, price=price),
    )


def parse_positions(body: Any) -> list[Position]:
    """Data API ``/positions`` array or v2 ``{data: [...]}`` envelope."""
    if isinstance(body, Mapping):
        body = body.get("data") or []
    return [parse_position(r) for r in require_list(body, "positions")]


def parse_position_page(body: Any) -> PositionPage:
    """Data API v2 ``/v2/positions`` envelope."""
    rows, cursor, more = _envelope(body, "positions page")
    return PositionPage(items=tuple(parse_position(r) for r in rows), next_cursor=cursor,
                        has_more=more)


def parse_leaderboard(rows: Any) -> list[LeaderboardEntry]:
    """Data API ``/v1/leaderboard`` array (``rank`` is a string on the wire)."""
    return [
        LeaderboardEntry(
            rank=opt_int(r.get("rank")) or 0,
            proxy_wallet=as_text(r.get("proxyWallet")),
            user_name=as_text(r.get("userName")),
            x_username=as_text(r.get("xUsername")),
            verified_badge=bool(r.get("verifiedBadge", False)),
            vol=req_dec(r.get("vol")),
            pnl=req_dec(r.get("pnl")),
            profile_image=as_text(r.get("profileImage")),
        )
        for r in require_list(rows, "leaderboard")
    ]
