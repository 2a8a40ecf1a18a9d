"""CLOB API (/clob): market data, L1/L2 auth, orders and cancels, for py-clob-client-v2."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from decimal import Decimal
from functools import wraps

from flask import Blueprint, Response, current_app, g, request

from devstack.ctf import is_protocol_position_id
from devstack.venue import auth
from devstack.venue.market_channel import book_summary
from devstack.venue.matching import BookOrder
from devstack.venue.rejections import ERR_ASSET_WITHOUT_MARKET
from devstack.venue.responses import error_response, json_response, poly_headers, query_int
from devstack.venue.state import (
    ERR_L1,
    ApiKeyRecord,
    SandboxState,
    VenueRejection,
    amount_text,
)
from devstack.venue.tape import TradePart

bp = Blueprint("sandbox_clob", __name__)

PREFIX = "/clob"
INITIAL_CURSOR = "MA=="
END_CURSOR = "LTE="


def _state() -> SandboxState:
    return current_app.extensions["sandbox_state"]


def _plain(value: Decimal) -> str:
    return format(value.normalize(), "f")


@bp.errorhandler(VenueRejection)
def _rejected(exc: VenueRejection):
    return error_response(exc.message, exc.status)


def _signed_path() -> str:
    """The path the client signed: without the /clob mount prefix and without the query."""
    path = request.path
    return path[len(PREFIX):] if path.startswith(PREFIX) else path


def l2_required(view: Callable) -> Callable:
    """Require valid L2 HMAC headers; the key's record lands in g.api_key."""

    @wraps(view)
    def wrapper(*args, **kwargs):
        state = _state()
        body = request.get_data(as_text=True)
        g.api_key = state.keys.authenticate_l2(poly_headers(), request.method, _signed_path(), body)
        return view(*args, **kwargs)

    return wrapper


def _l1_address() -> tuple[str, int]:
    headers = poly_headers()
    address = headers.get("POLY_ADDRESS", "")
    signature = headers.get("POLY_SIGNATURE", "")
    timestamp = headers.get("POLY_TIMESTAMP", "")
    nonce = headers.get("POLY_NONCE", "0") or "0"
    state = _state()
    if not address or not signature or not timestamp:
        raise VenueRejection(ERR_L1, 401)
    if not auth.verify_l1(state.config.chain_id, address, signature, timestamp, nonce):
        raise VenueRejection(ERR_L1, 401)
    return address, int(nonce)


def _creds(record: ApiKeyRecord) -> dict:
    return {"apiKey": record.api_key, "secret": record.secret, "passphrase": record.passphrase}


def _token_param() -> str:
    token = request.args.get("token_id", "").strip()
    if not token:
        raise VenueRejection("Invalid token id", 400)
    return token


# ------------------------------------------------------------------ public


@bp.get("/")
def root():
    """GET / answers "OK" like the venue."""
    return json_response("OK")


@bp.get("/ok")
def ok():
    """GET /ok health probe."""
    return json_response("OK")


@bp.get("/time")
def server_time():
    """GET /time: Unix seconds."""
    return json_response(int(_state().clock()))


@bp.get("/version")
def version():
    """GET /version: the exchange version orders must be signed for."""
    return json_response({"version": _state().config.order_version})


def book_json(state: SandboxState, token_id: str) -> dict:
    """An order book summary as GET /book sends it (best price last, hash included)."""
    market, _, bids, asks = state.token_book(token_id)
    last = state.last_trade_price(token_id)
    return book_summary(
        market,
        token_id,
        [(_plain(p), _plain(s)) for p, s in reversed(bids)],
        [(_plain(p), _plain(s)) for p, s in reversed(asks)],
        _plain(last) if last is not None else "",
        int(state.clock() * 1000),
    )


@bp.get("/book")
def book():
    """GET /book?token_id=."""
    return json_response(book_json(_state(), _token_param()))


def _json_list() -> list[dict]:
    try:
        payload = json.loads(request.get_data(as_text=True) or "[]")
    except ValueError as exc:
        raise VenueRejection("Invalid payload") from exc
    if not isinstance(payload, list) or not all(isinstance(p, dict) for p in payload):
        raise VenueRejection("Invalid payload")
    if len(payload) > 500:
        raise VenueRejection("Payload exceeds the limit")
    return payload


@bp.post("/books")
def books():
    """POST /books [{token_id}]."""
    state = _state()
    return json_response([book_json(state, str(p.get("token_id", ""))) for p in _json_list()])


def _side_price(state: SandboxState, token_id: str, side: str) -> str:
    if side not in ("BUY", "SELL"):
        raise VenueRejection("Invalid side")
    bid, ask = state.best_prices(token_id)
    chosen = bid if side == "BUY" else ask
    return _plain(chosen) if chosen is not None else "0"


@bp.get("/price")
def price():
    """GET /price?token_id=&side=: BUY gives the best bid, SELL the best ask."""
    state = _state()
    token = _token_param()
    return json_response({"price": _side_price(state, token, request.args.get("side", ""))})


@bp.post("/prices")
def prices():
    """POST /prices [{token_id, side}] -> {token_id: {side: price}}."""
    state = _state()
    result: dict[str, dict[str, str]] = {}
    for item in _json_list():
        token = str(item.get("token_id", ""))
        side = str(item.get("side", ""))
        result.setdefault(token, {})[side] = _side_price(state, token, side)
    return json_response(result)


def _mid(state: SandboxState, token_id: str) -> str:
    bid, ask = state.best_prices(token_id)
    if bid is not None and ask is not None:
        return _plain((bid + ask) / 2)
    market, index = state.catalog.market_for_token(token_id)
    return _plain(state.current_price(market, index))


@bp.get("/midpoint")
def midpoint():
    """GET /midpoint?token_id= -> {"mid": "..."}."""
    state = _state()
    return json_response({"mid": _mid(state, _token_param())})


@bp.post("/midpoints")
def midpoints():
    """POST /midpoints [{token_id}] -> {token_id: mid}."""
    state = _state()
    return json_response({
        str(p.get("token_id", "")): _mid(state, str(p.get("token_id", ""))) for p in _json_list()
    })


def _spread(state: SandboxState, token_id: str) -> str:
    bid, ask = state.best_prices(token_id)
    if bid is None or ask is None:
        return "0"
    return _plain(ask - bid)


@bp.get("/spread")
def spread():
    """GET /spread?token_id=."""
    state = _state()
    return json_response({"spread": _spread(state, _token_param())})


@bp.post("/spreads")
def spreads():
    """POST /spreads [{token_id}]."""
    state = _state()
    return json_response({
        str(p.get("token_id", "")): _spread(state, str(p.get("token_id", "")))
        for p in _json_list()
    })


def _last_trade(state: SandboxState, token_id: str) -> dict:
    last = state.last_trade_price(token_id)
    with state.lock:
        side = state.tape.last_taker_side(token_id)
    return {"price": _plain(last) if last is not None else "0.5", "side": side}


@bp.get("/last-trade-price")
def last_trade_price():
    """GET /last-trade-price?token_id=."""
    state = _state()
    return json_response(_last_trade(state, _token_param()))


@bp.post("/last-trades-prices")
def last_trades_prices():
    """POST /last-trades-prices [{token_id}]."""
    state = _state()
    return json_response([
        {"token_id": str(p.get("token_id", "")), **_last_trade(state, str(p.get("token_id", "")))}
        for p in _json_list()
    ])


@bp.get("/tick-size")
def tick_size():
    """GET /tick-size?token_id= -> {"minimum_tick_size": <number>}."""
    market, _ = _state().catalog.market_for_token(_token_param())
    return json_response({"minimum_tick_size": market.tick_size})


@bp.get("/neg-risk")
def neg_risk():
    """GET /neg-risk?token_id= -> {"neg_risk": bool}."""
    market, _ = _state().catalog.market_for_token(_token_param())
    return json_response({"neg_risk": market.neg_risk})


@bp.get("/fee-rate")
def fee_rate():
    """GET /fee-rate?token_id= -> {"base_fee": bps} (V1 field; 0 when fees are off)."""
    market, _ = _state().catalog.market_for_token(_token_param())
    return json_response({"base_fee": 1000 if market.fees else 0})


@bp.get("/markets-by-token/<token_id>")
def market_by_token(token_id: str):
    """GET /markets-by-token/{token_id}: the condition id behind a token."""
    market, _ = _state().catalog.market_for_token(token_id)
    return json_response({
        "condition_id": market.condition_id,
        "primary_token_id": market.token_ids[0],
        "secondary_token_id": market.token_ids[1],
    })


@bp.get("/clob-markets/<condition_id>")
def clob_market_info(condition_id: str):
    """GET /clob-markets/{condition_id}: the compact market info the client caches."""
    market = _state().catalog.market(condition_id)
    fees = market.fees
    info = {
        "c": market.condition_id,
        "t": [{"t": token, "o": market.outcomes[i]} for i, token in enumerate(market.token_ids)],
        "mts": market.tick_size,
        "mos": market.min_order_size,
        "nr": market.neg_risk,
        "td": int(market.taker_delay() * 1000),  # taker delay, ms (name unverified: §11)
    }
    if fees is not None:  # as the venue: a fee-free market has no fd at all
        info["fd"] = {"r": fees.rate, "e": fees.exponent, "to": fees.taker_only}
    return json_response(info)


def clob_market_json(state: SandboxState, condition_id: str) -> dict:
    """A CLOB Market object (GET /markets/{condition_id})."""
    market = state.catalog.market(condition_id)
    return {
        "condition_id": market.condition_id,
        "question_id": market.question_id,
        "question": market.question,
        "market_slug": market.slug,
        "description": market.description,
        "end_date_iso": market.end_date,
        "active": market.active,
        "closed": market.closed,
        "archived": False,
        "accepting_orders": not market.closed,
        "enable_order_book": True,
        "minimum_order_size": market.min_order_size,
        "minimum_tick_size": market.tick_size,
        "neg_risk": market.neg_risk,
        "neg_risk_market_id": market.neg_risk_market_id,
        "maker_base_fee": 1000 if market.fees else 0,
        "taker_base_fee": 1000 if market.fees else 0,
        "tokens": [
            {
                "token_id": token,
                "outcome": market.outcomes[i],
                "price": state.current_price(market, i),
                "winner": market.winner == i,
            }
            for i, token in enumerate(market.token_ids)
        ],
        "tags": [market.category],
    }


@bp.get("/markets/<condition_id>")
def clob_market(condition_id: str):
    """GET /markets/{condition_id}."""
    return json_response(clob_market_json(_state(), condition_id))


def _cursor_page(items: list, limit: int) -> tuple[list, str]:
    cursor = request.args.get("next_cursor", INITIAL_CURSOR) or INITIAL_CURSOR
    if cursor == END_CURSOR:
        return [], END_CURSOR
    try:
        offset = int(base64.b64decode(cursor).decode() or "0")
    except ValueError:
        offset = 0
    page = items[offset : offset + limit]
    nxt = offset + limit
    next_cursor = base64.b64encode(str(nxt).encode()).decode() if nxt < len(items) else END_CURSOR
    return page, next_cursor


@bp.get("/markets")
def clob_markets():
    """GET /markets: CLOB markets, cursor-paginated."""
    state = _state()
    with state.lock:
        items = [clob_market_json(state, c) for c in state.catalog.markets]
    page, next_cursor = _cursor_page(items, 500)
    return json_response({
        "limit": 500, "count": len(page), "next_cursor": next_cursor, "data": page,
    })


@bp.get("/prices-history")
def prices_history():
    """GET /prices-history?market=<token_id>&interval=|startTs&endTs&fidelity=."""
    state = _state()
    token = request.args.get("market", "").strip()
    state.catalog.market_for_token(token)
    now = int(state.clock())
    spans = {"1m": 60, "1h": 3600, "6h": 21600, "1d": 86400, "1w": 604800, "1m_": 2592000}
    interval = request.args.get("interval")
    start = query_int("startTs", 0)
    end = query_int("endTs", now)
    if interval and interval != "max":
        start, end = now - spans.get(interval, 86400), now
    fidelity = query_int("fidelity", 1, low=1) * 60
    with state.lock:
        points = [(t, p) for t, p in state.tape.price_history.get(token, []) if start <= t <= end]
    buckets: dict[int, tuple[int, Decimal]] = {}
    for t, p in points:
        buckets[t // fidelity] = (t, p)
    history = [{"t": t, "p": p} for t, p in sorted(buckets.values())]
    return json_response({"history": history})


# -------------------------------------------------------------------- L1


@bp.post("/auth/api-key")
def create_api_key():
    """POST /auth/api-key (L1): create the creds of (address, nonce)."""
    address, nonce = _l1_address()
    return json_response(_creds(_state().keys.create(address, nonce)))


@bp.get("/auth/derive-api-key")
def derive_api_key():
    """GET /auth/derive-api-key (L1): the existing creds of (address, nonce)."""
    address, nonce = _l1_address()
    return json_response(_creds(_state().keys.derive(address, nonce)))


# -------------------------------------------------------------------- L2


@bp.get("/auth/api-keys")
@l2_required
def api_keys():
    """GET /auth/api-keys (L2)."""
    state = _state()
    record: ApiKeyRecord = g.api_key
    with state.lock:
        keys = state.keys.keys_of(record.address)
    return json_response({"apiKeys": keys})


@bp.delete("/auth/api-key")
@l2_required
def delete_api_key():
    """DELETE /auth/api-key (L2)."""
    _state().keys.delete(g.api_key)
    return json_response("OK")


@bp.get("/auth/ban-status/closed-only")
@l2_required
def closed_only():
    """GET /auth/ban-status/closed-only (L2)."""
    return json_response({"closed_only": False})


def _parse_body() -> object:
    try:
        return json.loads(request.get_data(as_text=True) or "null", parse_float=Decimal)
    except ValueError as exc:
        raise VenueRejection("Invalid order payload") from exc


@bp.post("/order")
@l2_required
def post_order():
    """POST /order (L2): one signed V2 order."""
    return json_response(_state().submit_order(g.api_key, _parse_body(),
                                               received_at=g.get("venue_received_at")))


@bp.post("/orders")
@l2_required
def post_orders():
    """POST /orders (L2): a batch; each answer is a success or {errorMsg, success: false}."""
    state = _state()
    envelopes = _parse_body()
    if not isinstance(envelopes, list) or len(envelopes) > 15:
        raise VenueRejection("Invalid order payload")
    answers = []
    for envelope in envelopes:
        try:
            refused = state.modes.order_refusal(envelope)  # post-only mode, per order
            if refused:
                raise VenueRejection(refused, 503)
            answers.append(state.submit_order(g.api_key, envelope,
                                              received_at=g.get("venue_received_at")))
        except VenueRejection as exc:
            answers.append({
                "errorMsg": exc.message, "orderID": "", "takingAmount": "", "makingAmount": "",
                "status": "", "success": False,
            })
    return json_response(answers)


MAX_CANCEL_IDS = 1000


def _cancel(order_ids: list[str]) -> dict:
    state = _state()
    with state.lock:
        return state.desk.cancel(g.api_key, order_ids)


@bp.delete("/order")
@l2_required
def cancel_order():
    """DELETE /order {orderID} (L2)."""
    body = _parse_body()
    if not isinstance(body, dict) or not body.get("orderID"):
        raise VenueRejection("Invalid order payload")
    return json_response(_cancel([str(body["orderID"])]))


@bp.delete("/orders")
@l2_required
def cancel_orders():
    """DELETE /orders [ids] (L2): at most 1,000 ids (ACCOUNTS.md §11)."""
    body = _parse_body()
    if not isinstance(body, list):
        raise VenueRejection("Invalid order payload")
    if len(body) > MAX_CANCEL_IDS:
        raise VenueRejection(f"Too many orders: at most {MAX_CANCEL_IDS} per request")
    return json_response(_cancel([str(i) for i in body]))


@bp.get("/v1/user/rate-limit-tier")
@l2_required
def rate_limit_tier():
    """GET /v1/user/rate-limit-tier (L2): the tier of the key's signer (rate_tiers.py)."""
    return json_response({"tier": _state().rate_tiers.tier_of(g.api_key.address)})


@bp.delete("/cancel-all")
@l2_required
def cancel_all():
    """DELETE /cancel-all (L2)."""
    state = _state()
    with state.lock:
        return json_response(state.desk.cancel_where(g.api_key))


@bp.delete("/cancel-market-orders")
@l2_required
def cancel_market_orders():
    """DELETE /cancel-market-orders {market?, asset_id?} (L2)."""
    body = _parse_body() or {}
    if not isinstance(body, dict):
        raise VenueRejection("Invalid order payload")
    state = _state()
    with state.lock:
        return json_response(
            state.desk.cancel_where(g.api_key, body.get("market"), body.get("asset_id")))


def open_order_json(state: SandboxState, order: BookOrder) -> dict:
    """An order as GET /data/orders lists it (sizes in shares, decimal strings)."""
    return {
        "id": order.order_id,
        "status": order.status,
        "owner": order.owner,
        "maker_address": order.maker,
        "market": order.condition_id,
        "asset_id": order.token_id,
        "side": order.side,
        "original_size": amount_text(order.original_size),
        "size_matched": amount_text(order.size_matched),
        "price": format(order.price.normalize(), "f"),
        "outcome": order.outcome,
        "expiration": str(order.expiration),
        "order_type": order.order_type,
        "associate_trades": state.lifecycle.associate_trades(order, state.clock()),
        "created_at": order.created_at,
    }


@bp.get("/data/orders")
@l2_required
def open_orders():
    """GET /data/orders (L2): live orders, cursor-paginated.

    ``asset_id`` alone is refused: from 2026-12-14 it needs ``market`` beside it
    (ACCOUNTS.md §12).
    """
    state = _state()
    market, asset_id = request.args.get("market", ""), request.args.get("asset_id", "")
    if asset_id and not market:
        raise VenueRejection(ERR_ASSET_WITHOUT_MARKET)
    with state.lock:
        orders = state.desk.listed_orders(g.api_key, market=market, asset_id=asset_id,
                                          order_id=request.args.get("id", ""))
        listed = [open_order_json(state, o) for o in orders]
    page, next_cursor = _cursor_page(listed, 100)
    return json_response({"limit": 100, "next_cursor": next_cursor, "count": len(page),
                          "data": page})


@bp.get("/data/order/<order_id>")
@l2_required
def get_order(order_id: str):
    """GET /data/order/{id} (L2)."""
    state = _state()
    with state.lock:
        order = state.desk.order_for(g.api_key, order_id)
        if state.lifecycle.finished_order_hidden(order):
            return Response("", 200, mimetype="application/json")  # as the venue: nothing
        return json_response(open_order_json(state, order))


def clob_trade_json(part: TradePart, viewer: str, status: str = "CONFIRMED") -> dict:
    """A CLOB trade entity (a match, or a part of one) from the viewer's side."""
    trade = part.trade
    taker = trade.taker_order
    market = trade.market
    makers = []
    for order, shares, maker_price in part.maker_fills:
        makers.append({
            "order_id": order.order_id,
            "owner": order.owner,
            "maker_address": order.maker,
            "matched_amount": amount_text(shares),
            "price": format(maker_price.normalize(), "f"),
            "fee_rate_bps": "0",
            "asset_id": order.token_id,
            "outcome": order.outcome,
            "side": order.side,
        })
    side = "TAKER" if taker.maker.lower() == viewer.lower() else "MAKER"
    return {
        "id": part.id,
        "taker_order_id": taker.order_id,
        "market": market.condition_id,
        "asset_id": taker.token_id,
        "side": taker.side,
        "size": amount_text(part.size),
        "fee_rate_bps": str(trade.fee_rate_bps),
        "price": format(part.price.normalize(), "f"),
        "status": status,
        "match_time": str(part.match_time),
        "last_update": str(part.match_time),
        "outcome": taker.outcome,
        "bucket_index": 0,
        "owner": taker.owner,
        "maker_address": taker.maker,
        "maker_orders": makers,
        "transaction_hash": trade.transaction_hash,
        "trader_side": side,
    }


@bp.get("/data/trades")
@l2_required
def trades():
    """GET /data/trades (L2): the key's trades as taker or maker."""
    state = _state()
    record: ApiKeyRecord = g.api_key
    wanted_id = request.args.get("id", "")
    market = request.args.get("market", "")
    asset = request.args.get("asset_id", "")
    maker_address = request.args.get("maker_address", "")
    after = query_int("after", 0)
    before = query_int("before", 2**62)
    funders = {record.address.lower()} | state.accounts.wallets_of(record.address)
    with state.lock:
        rows = []
        now = state.clock()
        for trade in reversed(state.tape.clob_trades.values()):
            orders = [trade.taker_order, *(o for o, _, _ in trade.maker_fills)]
            parties = {o.maker.lower() for o in orders}
            # a session key's own orders count too (it owns no wallet; ACCOUNTS.md §2.6)
            mine = (parties & funders) or {o.maker.lower() for o in orders
                                          if o.owner == record.api_key}
            if not mine:
                continue
            if market and trade.market.condition_id != market:
                continue
            if asset and trade.taker_order.token_id != asset:
                continue
            if maker_address and maker_address.lower() not in parties:
                continue
            for part in reversed(state.lifecycle.visible_parts(trade, now)):
                if (wanted_id and part.id != wanted_id) or \
                        not after <= part.match_time <= before:
                    continue
                status = state.lifecycle.status(trade, now, part.matched_at)
                rows.append(clob_trade_json(part, next(iter(mine)), status))
    page, next_cursor = _cursor_page(rows, 100)
    return json_response({"limit": 100, "next_cursor": next_cursor, "count": len(page),
                          "data": page})


def _balance_query() -> tuple[int, str]:
    """(signature_type, token id or "" for pUSD) of a balance-allowance request.

    The asset type must name what the token is (ACCOUNTS.md §5, §11): ``CONDITIONAL`` a CTF
    token, ``CONDITIONAL-V2`` a protocol-v2 position id; the other one, or a conditional
    type without a token, is refused (the venue's "invalid params" shape)."""
    asset_type = request.args.get("asset_type", "COLLATERAL").upper()
    if asset_type not in BALANCE_ASSET_TYPES:
        raise VenueRejection(f"GetBalanceAndAllowance invalid params: asset_type {asset_type} "
                             "is not one of " + ", ".join(BALANCE_ASSET_TYPES))
    if asset_type == "COLLATERAL":
        return query_int("signature_type", 0), ""
    token_id = request.args.get("token_id", "")
    if not token_id.isdigit():
        raise VenueRejection("GetBalanceAndAllowance invalid params: assetId invalid value "
                             f"{token_id or -1}, as this is a erc1155 operation, asset must be "
                             "a valid tokenId value")
    wanted = "CONDITIONAL-V2" if is_protocol_position_id(token_id) else "CONDITIONAL"
    if asset_type != wanted:
        raise VenueRejection(f"GetBalanceAndAllowance invalid params: assetId {token_id} is "
                             f"not a {asset_type} asset, its asset_type is {wanted}")
    return query_int("signature_type", 0), token_id


BALANCE_ASSET_TYPES = ("COLLATERAL", "CONDITIONAL", "CONDITIONAL-V2")


@bp.get("/balance-allowance")
@l2_required
def balance_allowance():
    """GET /balance-allowance (L2): the CLOB's cached balance and allowances of the key's
    funder, base units (refreshed only by /balance-allowance/update, as on the venue)."""
    record: ApiKeyRecord = g.api_key
    signature_type, token_id = _balance_query()
    return json_response(_state().balance_allowance(record.address, signature_type, token_id))


@bp.get("/balance-allowance/update")
@l2_required
def update_balance_allowance():
    """GET /balance-allowance/update (L2): refresh the cache from the ledger and approvals."""
    record: ApiKeyRecord = g.api_key
    signature_type, token_id = _balance_query()
    _state().update_balance_allowance(record.address, signature_type, token_id)
    return json_response("")


@bp.get("/v1/user/session-signers")
@l2_required
def session_signers():
    """GET /v1/user/session-signers (L2, the owner): {wallet, signers: [{address, scopes,
    valid_until}]} of the key's deposit wallet, session signers in force only."""
    record: ApiKeyRecord = g.api_key
    state = _state()
    with state.lock:
        return json_response(state.relayer.session_signers_of(record.address))


@bp.post("/v1/heartbeats")
@l2_required
def heartbeat():
    """POST /v1/heartbeats (L2)."""
    body = _parse_body() or {}
    beat = body.get("heartbeat_id") if isinstance(body, dict) else ""
    return json_response({"heartbeat_id": beat or str(int(time.time() * 1000)), "error": ""})

