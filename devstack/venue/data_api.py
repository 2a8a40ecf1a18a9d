"""Data API (/data): trades, activity, positions and the leaderboard, Data API v1 shapes."""

from __future__ import annotations

import base64
import json
import re
from decimal import Decimal

from flask import Blueprint, Response, current_app, request

from devstack.venue.responses import (
    error_response,
    json_response,
    query_bool,
    query_decimal,
    query_int,
    query_list,
)
from devstack.venue.state import Fill, Redemption, SandboxState, units

bp = Blueprint("sandbox_data", __name__)

_SIX = Decimal("0.000001")
_FOUR = Decimal("0.0001")


def _state() -> SandboxState:
    return current_app.extensions["sandbox_state"]


def _fills(state: SandboxState) -> list[Fill]:
    """A copy of every fill so far, oldest first (read without holding the lock after)."""
    with state.lock:
        return list(state.tape.fills)


def _market_fields(state: SandboxState, condition_id: str) -> dict:
    market = state.catalog.markets[condition_id]
    event = state.catalog.events[market.event_id]
    return {
        "title": market.question,
        "slug": market.slug,
        "icon": market.image,
        "eventSlug": event.slug,
    }


def _profile_fields(state: SandboxState, address: str) -> dict:
    name, pseudonym = state.profile(address)
    return {
        "name": name,
        "pseudonym": pseudonym,
        "bio": "",
        "profileImage": "",
        "profileImageOptimized": "",
    }


def trade_row(state: SandboxState, fill: Fill) -> dict:
    """A Data API /trades row (proxyWallet lowercase, numbers for size and price)."""
    market = _market_fields(state, fill.condition_id)
    return {
        "proxyWallet": fill.proxy_wallet.lower(),
        "side": fill.side,
        "asset": fill.asset,
        "conditionId": fill.condition_id,
        "size": units(fill.size),
        "price": fill.price,
        "timestamp": fill.timestamp,
        "title": market["title"],
        "slug": market["slug"],
        "icon": market["icon"],
        "eventSlug": market["eventSlug"],
        "outcome": fill.outcome,
        "outcomeIndex": fill.outcome_index,
        **_profile_fields(state, fill.proxy_wallet),
        "transactionHash": fill.transaction_hash,
    }


def activity_row(state: SandboxState, item: Fill | Redemption) -> dict:
    """A Data API /activity row: TRADE for fills, REDEEM for redemptions."""
    market = _market_fields(state, item.condition_id)
    if isinstance(item, Fill):
        kind, side, price = "TRADE", item.side, item.price
    else:
        kind, side, price = "REDEEM", "", Decimal(0)
    return {
        "proxyWallet": item.proxy_wallet.lower(),
        "timestamp": item.timestamp,
        "conditionId": item.condition_id,
        "type": kind,
        "size": units(item.size),
        "usdcSize": units(item.usdc),
        "transactionHash": item.transaction_hash,
        "price": price,
        "asset": item.asset,
        "side": side,
        "outcomeIndex": item.outcome_index,
        "title": market["title"],
        "slug": market["slug"],
        "icon": market["icon"],
        "eventSlug": market["eventSlug"],
        "outcome": item.outcome,
        **_profile_fields(state, item.proxy_wallet),
    }


def _window(items: list, *, default_limit: int, max_limit: int) -> list:
    offset = query_int("offset", 0, high=10000)
    limit = query_int("limit", default_limit, low=0, high=max_limit)
    return items[offset : offset + limit]


def _select_fills(state: SandboxState) -> list[Fill]:
    """Fills matching the /trades query, newest first (takerOnly defaults to true)."""
    user = request.args.get("user", "").lower()
    markets = {m.lower() for m in query_list("market")}
    event_ids = set(query_list("eventId"))
    side = request.args.get("side", "").upper()
    taker_only = query_bool("takerOnly")
    if taker_only is None:
        taker_only = query_bool("taker_only")
    taker_only = True if taker_only is None else taker_only
    start = query_int("start", 0)
    end = query_int("end", 2**62)
    filter_type = request.args.get("filterType", "").upper()
    filter_amount = query_decimal("filterAmount")
    selected = []
    for fill in reversed(_fills(state)):
        if taker_only and fill.role != "TAKER":
            continue
        if user and fill.proxy_wallet.lower() != user:
            continue
        if markets and fill.condition_id.lower() not in markets:
            continue
        if event_ids and state.catalog.markets[fill.condition_id].event_id not in event_ids:
            continue
        if side and fill.side != side:
            continue
        if not start <= fill.timestamp <= end:
            continue
        if filter_amount is not None:
            amount = units(fill.usdc) if filter_type == "CASH" else units(fill.size)
            if amount < filter_amount:
                continue
        selected.append(fill)
    return selected


@bp.get("/trades")
def trades():
    """GET /trades: fills, newest first; takerOnly (default true) hides maker fills."""
    state = _state()
    page = _window(_select_fills(state), default_limit=100, max_limit=10000)
    return json_response([trade_row(state, f) for f in page])


@bp.get("/v2/trades")
def trades_v2():
    """GET /v2/trades: snake_case rows in a cursor envelope."""
    state = _state()
    return _v2_page(_select_fills(state), lambda f: _snake(trade_row(state, f)))


def _select_activity(state: SandboxState, user: str) -> list[Fill | Redemption]:
    """The user's TRADE and REDEEM items matching the /activity query, sorted."""
    types = {t.upper() for t in query_list("type")}
    markets = {m.lower() for m in query_list("market")}
    side = request.args.get("side", "").upper()
    start = query_int("start", 0)
    end = query_int("end", 2**62)
    items: list[Fill | Redemption] = []
    if not types or "TRADE" in types:
        items.extend(f for f in _fills(state) if f.proxy_wallet.lower() == user)
    if not types or "REDEEM" in types:
        with state.lock:
            redemptions = list(state.tape.redemptions)
        items.extend(r for r in redemptions if r.proxy_wallet.lower() == user)
    items = [
        i for i in items
        if (not markets or i.condition_id.lower() in markets)
        and (not side or (isinstance(i, Fill) and i.side == side))
        and start <= i.timestamp <= end
    ]
    sort_by = request.args.get("sortBy", "TIMESTAMP").upper()
    descending = request.args.get("sortDirection", "DESC").upper() != "ASC"
    if sort_by == "TOKENS":
        items.sort(key=lambda i: (i.size, i.seq), reverse=descending)
    elif sort_by == "CASH":
        items.sort(key=lambda i: (i.usdc, i.seq), reverse=descending)
    else:
        items.sort(key=lambda i: (i.timestamp, i.seq), reverse=descending)
    return items


@bp.get("/activity")
def activity():
    """GET /activity?user=: the user's TRADE (maker and taker) and REDEEM rows."""
    state = _state()
    user = request.args.get("user", "").lower()
    if not user:
        return error_response("user is required", 400)
    page = _window(_select_activity(state, user), default_limit=100, max_limit=500)
    return json_response([activity_row(state, i) for i in page])


@bp.get("/v2/activity")
def activity_v2():
    """GET /v2/activity?user=: snake_case rows in a cursor envelope."""
    state = _state()
    user = request.args.get("user", "").lower()
    if not user:
        return error_response("user is required", 400)
    items = _select_activity(state, user)
    return _v2_page(items, lambda i: _snake(activity_row(state, i)))


_RENAMES = {"asset": "token_id", "oppositeAsset": "opposite_token_id"}


def _snake(row: dict) -> dict:
    """A v1 camelCase row in Data API v2 snake_case (asset -> token_id)."""
    out = {}
    for key, value in row.items():
        name = _RENAMES.get(key) or re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()
        out[name] = value
    return out


def _v2_page(items: list, render) -> Response:
    """The v2 envelope {data, pagination:{limit, offset, has_more, next_cursor}}."""
    limit = query_int("limit", 100, low=1, high=500)
    offset = query_int("offset", 0)
    cursor = request.args.get("cursor")
    if cursor:
        try:
            state = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
            offset, limit = int(state["o"]), int(state["l"])
        except (ValueError, KeyError, TypeError):
            return error_response("invalid cursor", 400)
    page = items[offset : offset + limit]
    has_more = offset + limit < len(items)
    next_cursor = ""
    if has_more:
        raw = json.dumps({"o": offset + limit, "l": limit}, separators=(",", ":"))
        next_cursor = base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")
    return json_response({
        "data": [render(item) for item in page],
        "pagination": {
            "limit": limit, "offset": offset, "has_more": has_more, "next_cursor": next_cursor,
        },
    })


def _quant(value: Decimal, step: Decimal = _SIX) -> Decimal:
    return value.quantize(step).normalize() if value else Decimal(0)


def position_rows(state: SandboxState, user: str) -> list[dict]:
    """Data API /positions rows of a user, unfiltered."""
    rows = []
    for market, index, shares, stats in state.held_positions(user):
        size = units(shares)
        cur_price = state.current_price(market, index)
        initial = units(stats.cost)
        fees = units(stats.fees)
        current = size * cur_price
        cash_pnl = current - initial
        percent = cash_pnl / initial * 100 if initial else Decimal(0)
        gross = units(stats.gross_cost)
        realized = units(stats.realized)
        event = state.catalog.events[market.event_id]
        redeemable = state.redeemable(market)
        rows.append({
            "proxyWallet": user.lower(),
            "asset": market.token_ids[index],
            "conditionId": market.condition_id,
            "size": _quant(size),
            "avgPrice": _quant(initial / size, _FOUR) if size else Decimal(0),
            "initialValue": _quant(initial),
            "grossInitialValue": _quant(initial + fees),
            "entryFeesUsdc": _quant(fees),
            "currentValue": _quant(current),
            "cashPnl": _quant(cash_pnl),
            "percentPnl": _quant(percent, _FOUR),
            "totalBought": _quant(units(stats.bought)),
            "realizedPnl": _quant(realized),
            "percentRealizedPnl": _quant(realized / gross * 100, _FOUR) if gross else Decimal(0),
            "curPrice": _quant(cur_price, _FOUR),
            "redeemable": redeemable,
            "mergeable": not redeemable and all(
                state.ledger.token_balance(user, t) > 0 for t in market.token_ids
            ),
            "title": market.question,
            "slug": market.slug,
            "icon": market.image,
            "eventId": event.id,
            "eventSlug": event.slug,
            "outcome": market.outcomes[index],
            "outcomeIndex": index,
            "oppositeOutcome": market.outcomes[1 - index],
            "oppositeAsset": market.token_ids[1 - index],
            "endDate": market.end_date[:10],
            "negativeRisk": market.neg_risk,
        })
    return rows


_POSITION_SORTS = {
    "TOKENS": "size", "CURRENT": "currentValue", "INITIAL": "initialValue",
    "CASHPNL": "cashPnl", "PERCENTPNL": "percentPnl", "PRICE": "curPrice",
    "AVGPRICE": "avgPrice", "TITLE": "title",
}


def _select_positions(state: SandboxState, user: str) -> list[dict]:
    """v1 position rows matching the /positions query (or v2's snake_case one), sorted."""
    threshold = query_decimal("sizeThreshold")
    threshold = query_decimal("size_threshold") if threshold is None else threshold
    threshold = Decimal(1) if threshold is None else threshold
    markets = {m.lower() for m in query_list("market")}
    redeemable = query_bool("redeemable")
    mergeable = query_bool("mergeable")
    title = request.args.get("title", "").lower()
    rows = [
        r for r in position_rows(state, user)
        if r["size"] >= threshold and r["size"] > 0
        and (not markets or r["conditionId"].lower() in markets)
        and (redeemable is None or r["redeemable"] == redeemable)
        and (mergeable is None or r["mergeable"] == mergeable)
        and (not title or title in r["title"].lower())
    ]
    key = _POSITION_SORTS.get(request.args.get("sortBy", "TOKENS").upper(), "size")
    descending = request.args.get("sortDirection", "DESC").upper() != "ASC"
    rows.sort(key=lambda r: r[key], reverse=descending)
    return rows


@bp.get("/positions")
def positions():
    """GET /positions?user=: current positions with PnL, redeemable after resolution."""
    state = _state()
    user = request.args.get("user", "").lower()
    if not user:
        return error_response("user is required", 400)
    rows = _select_positions(state, user)
    return json_response(_window(rows, default_limit=100, max_limit=500))


def position_status(state: SandboxState, row: dict) -> str:
    """The v2 ``status`` of a v1 row (ACCOUNTS.md §12): a resolved position REDEEMABLE, or
    REDEEMABLE_LOST when its outcome lost; MERGEABLE while both outcomes are held; OPEN;
    CLOSED once sold out. The ``position_status`` switch reports another for every row."""
    if state.list_rules.position_status is not None:
        return state.list_rules.position_status
    if row["redeemable"]:
        return "REDEEMABLE" if row["curPrice"] > 0 else "REDEEMABLE_LOST"
    if row["mergeable"]:
        return "MERGEABLE"
    return "OPEN" if row["size"] > 0 else "CLOSED"


def position_v2(state: SandboxState, row: dict) -> dict:
    """A v1 position row in the Data API v2 shape."""
    times = [
        f.timestamp for f in _fills(state)
        if f.asset == row["asset"] and f.proxy_wallet.lower() == row["proxyWallet"]
    ]
    name, _ = state.profile(row["proxyWallet"])
    return {
        "proxy_wallet": row["proxyWallet"],
        "token_id": row["asset"],
        "condition_id": row["conditionId"],
        "current_size": row["size"],
        "avg_price": row["avgPrice"],
        "entry_cost_usdc": row["initialValue"],
        "entry_fees_usdc": row["entryFeesUsdc"],
        "total_cost_usdc": row["grossInitialValue"],
        "current_price": row["curPrice"],
        "current_value": row["currentValue"],
        "total_size": row["totalBought"],
        "realized_pnl": row["realizedPnl"],
        "unrealized_pnl": row["cashPnl"],
        "total_pnl": row["cashPnl"] + row["realizedPnl"],
        "percent_pnl": row["percentPnl"],
        "percent_realized_pnl": row["percentRealizedPnl"],
        "status": position_status(state, row),
        "redeemable": row["redeemable"],
        "mergeable": row["mergeable"],
        "negative_risk": row["negativeRisk"],
        "archived": False,
        "title": row["title"],
        "slug": row["slug"],
        "icon": row["icon"],
        "event_id": row["eventId"],
        "event_slug": row["eventSlug"],
        "outcome": row["outcome"],
        "outcome_index": row["outcomeIndex"],
        "opposite_outcome": row["oppositeOutcome"],
        "opposite_token_id": row["oppositeAsset"],
        "end_date": row["endDate"],
        "last_event_at": max(times) if times else 0,
        "first_entry_at": min(times) if times else 0,
        "name": name,
        "profile_image": "",
        "verified": False,
    }


@bp.get("/v2/positions")
def positions_v2():
    """GET /v2/positions?user=&status=: v2 rows, each with its status, in a cursor envelope."""
    state = _state()
    user = request.args.get("user", "").lower()
    if not user:
        return error_response("user is required", 400)
    rows = _select_positions(state, user)
    wanted = {s.upper() for s in query_list("status")}
    if wanted:
        rows = [r for r in rows if position_status(state, r) in wanted]
    return _v2_page(rows, lambda r: position_v2(state, r))


_PERIODS = {"DAY": 86400, "WEEK": 604800, "MONTH": 2592000, "ALL": None}


def leaderboard_rows(state: SandboxState, period: str, order_by: str) -> list[dict]:
    """Traders ranked by PnL or volume (the house is not a trader)."""
    span = _PERIODS.get(period.upper())
    since = int(state.clock()) - span if span else 0
    volume: dict[str, Decimal] = {}
    for fill in _fills(state):
        address = fill.proxy_wallet.lower()
        if address == state.house.lower() or fill.timestamp < since:
            continue
        volume[address] = volume.get(address, Decimal(0)) + units(fill.usdc)
    board = []
    for address, vol in volume.items():
        pnl = sum(
            (row["cashPnl"] + row["realizedPnl"] for row in position_rows(state, address)),
            Decimal(0),
        )
        board.append((address, vol, pnl))
    key = 1 if order_by.upper() == "VOL" else 2
    board.sort(key=lambda row: row[key], reverse=True)
    rows = []
    for rank, (address, vol, pnl) in enumerate(board, start=1):
        name, _ = state.profile(address)
        rows.append({
            "rank": str(rank),
            "proxyWallet": address,
            "userName": name,
            "xUsername": "",
            "verifiedBadge": False,
            "vol": _quant(vol),
            "pnl": _quant(pnl),
            "profileImage": "",
        })
    return rows


@bp.get("/v1/leaderboard")
def leaderboard():
    """GET /v1/leaderboard?timePeriod=&orderBy=PNL|VOL&limit=&offset=&user=."""
    state = _state()
    rows = leaderboard_rows(
        state, request.args.get("timePeriod", "DAY"), request.args.get("orderBy", "PNL")
    )
    user = request.args.get("user", "").lower()
    if user:
        rows = [r for r in rows if r["proxyWallet"] == user]
    return json_response(_window(rows, default_limit=25, max_limit=50))
