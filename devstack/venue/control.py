"""Sandbox-only control API (/_sandbox): set up scenarios and look inside the venue in tests.

Routes (JSON bodies; money and sizes as decimal strings):

* GET    /_sandbox/state                      markets, house and whale addresses, switches
* POST   /_sandbox/reset                      back to the seeded catalog, empty accounts
* POST   /_sandbox/markets                    add a market {question, slug, category, ...};
                                             {question_id, condition_id, collateral}
                                             list an existing on-chain condition
* POST   /_sandbox/chain                      {rpc_url, ctf}: index on-chain holdings
                                             ({rpc_url: ""} stops)
* POST   /_sandbox/markets/<condition>/resolve {winner: 0|1|"Yes"}
* POST   /_sandbox/fund                       {address, amount} pUSD, or {address, token_id, shares}
* GET    /_sandbox/balances/<address>         {pusd, positions: {token_id: shares}}
* POST   /_sandbox/trades                     inject a fill {wallet, token_id, side, price?, size?}
                                             (answers its RTDS payloads and published_us)
* POST   /_sandbox/redeem                     {address, condition_id}
* POST   /_sandbox/deposit-wallets            {wallet, owner}
* POST   /_sandbox/eoa-refusal                {enabled, legacy?: [addresses]}
* POST   /_sandbox/faults                     {path, count?, status?, delay?, method?, retry_after?}
* DELETE /_sandbox/faults                     disarm all faults
* GET    /_sandbox/orders                     every POST /order envelope received (and the answer)
* DELETE /_sandbox/orders                     forget them
* GET    /_sandbox/requests?since=<epoch s>   requests per endpoint per second (rate limits)
* DELETE /_sandbox/requests                   forget them
* POST   /_sandbox/whales/start {interval?}, /_sandbox/whales/stop, /_sandbox/whales/tick
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation

from flask import Blueprint, current_app, request

from devstack.venue.catalog import TAGS, MarketSeed
from devstack.venue.faults import FaultRule
from devstack.venue.gamma import market_json
from devstack.venue.responses import error_response, json_response
from devstack.venue.state import SandboxState, VenueRejection, amount_text
from devstack.venue.whales import WhaleRunner

bp = Blueprint("sandbox_control", __name__)


def _state() -> SandboxState:
    return current_app.extensions["sandbox_state"]


def _whales() -> WhaleRunner:
    return current_app.extensions["sandbox_whales"]


@bp.errorhandler(VenueRejection)
def _rejected(exc: VenueRejection):
    return error_response(exc.message, exc.status)


def _body() -> dict:
    try:
        body = json.loads(request.get_data(as_text=True) or "{}", parse_float=Decimal)
    except ValueError as exc:
        raise VenueRejection("body must be JSON") from exc
    if not isinstance(body, dict):
        raise VenueRejection("body must be a JSON object")
    return body


def _decimal(body: dict, name: str, default: Decimal | None = None) -> Decimal | None:
    raw = body.get(name)
    if raw is None or raw == "":
        return default
    try:
        return Decimal(str(raw))
    except InvalidOperation as exc:
        raise VenueRejection(f"{name} must be a decimal") from exc


def _required(body: dict, name: str) -> str:
    value = body.get(name)
    if not value:
        raise VenueRejection(f"{name} is required")
    return str(value)


def _optional(body: dict, name: str) -> str | None:
    value = body.get(name)
    return str(value) if value else None


@bp.get("/state")
def state_summary():
    """Markets (ids and tokens), house and whale wallets, switches."""
    state = _state()
    with state.lock:
        markets = [
            {
                "id": m.id, "slug": m.slug, "question": m.question, "category": m.category,
                "condition_id": m.condition_id, "token_ids": list(m.token_ids),
                "outcomes": list(m.outcomes), "neg_risk": m.neg_risk,
                "tick_size": str(m.tick_size), "closed": m.closed, "winner": m.winner,
                "house_liquidity": m.house_liquidity, "fair_price": str(m.fair_price),
            }
            for m in state.markets_by_id.values()
        ]
        return json_response({
            "chain_id": state.config.chain_id,
            "exchange": state.config.exchange,
            "neg_risk_exchange": state.config.neg_risk_exchange,
            "collateral": state.config.collateral,
            "house": state.house,
            "whales": state.whales,
            "whales_running": _whales().running,
            "refuse_eoa_makers": state.config.refuse_eoa_makers,
            "markets": markets,
            "faults": state.faults.snapshot(),
            "chain": state.chain.describe() if state.chain else None,
        })


@bp.post("/reset")
def reset():
    """Back to the seeded catalog; stops whales."""
    _whales().stop()
    _state().reset()
    return json_response({"ok": True})


@bp.post("/markets")
def add_market():
    """Add a market; answers its Gamma object."""
    body = _body()
    category = str(body.get("category", "politics"))
    if category not in TAGS:
        raise VenueRejection(f"category must be one of {sorted(TAGS)}")
    slug = _required(body, "slug")
    outcomes = body.get("outcomes") or ["Yes", "No"]
    if not isinstance(outcomes, list) or len(outcomes) != 2:
        raise VenueRejection("outcomes must be a list of two names")
    fair = _decimal(body, "fair_price", Decimal("0.5"))
    tick = _decimal(body, "tick_size", Decimal("0.01"))
    if tick not in (Decimal("0.1"), Decimal("0.01"), Decimal("0.001"), Decimal("0.0001")):
        raise VenueRejection("tick_size must be 0.1, 0.01, 0.001 or 0.0001")
    seed = MarketSeed(
        category=category,
        event_slug=str(body.get("event_slug") or slug),
        event_title=str(body.get("event_title") or _required(body, "question")),
        question=_required(body, "question"),
        slug=slug,
        fair_price=fair,
        tick_size=tick,
        neg_risk=bool(body.get("neg_risk", False)),
        fee_rate=_decimal(body, "fee_rate"),
        group_item_title=str(body.get("group_item_title", "")),
        outcomes=(str(outcomes[0]), str(outcomes[1])),
        days_to_end=int(body.get("days_to_end", 30)),
        min_order_size=_decimal(body, "min_order_size", Decimal(5)),
        question_id=_optional(body, "question_id"),
        condition_id=_optional(body, "condition_id"),
        collateral=_optional(body, "collateral"),
    )
    state = _state()
    liquidity = body.get("liquidity")
    market = state.add_market(seed, house_liquidity=None if liquidity is None else bool(liquidity))
    with state.lock:
        return json_response(market_json(state, market), 201)


@bp.post("/chain")
def attach_chain():
    """Index a chain's ConditionalTokens ({rpc_url, ctf}); an empty rpc_url stops indexing."""
    body = _body()
    rpc_url = str(body.get("rpc_url") or "")
    ctf = _required(body, "ctf") if rpc_url else ""
    try:
        holdings = _state().attach_chain(rpc_url, ctf)
    except ValueError as exc:
        raise VenueRejection(str(exc)) from exc
    return json_response({"chain": holdings.describe() if holdings else None})


@bp.post("/markets/<condition_id>/resolve")
def resolve_market(condition_id: str):
    """Resolve a market: {winner: index or outcome name}."""
    body = _body()
    state = _state()
    market = state.market(condition_id)
    winner = body.get("winner")
    if isinstance(winner, str) and not winner.isdigit():
        if winner not in market.outcomes:
            raise VenueRejection(f"winner must be one of {list(market.outcomes)}")
        winner = market.outcomes.index(winner)
    try:
        index = int(winner)
    except (TypeError, ValueError) as exc:
        raise VenueRejection("winner is required") from exc
    state.resolve(condition_id, index)
    with state.lock:
        return json_response(market_json(state, market))


@bp.post("/fund")
def fund():
    """Credit pUSD ({address, amount}) or outcome tokens ({address, token_id, shares})."""
    body = _body()
    state = _state()
    address = _required(body, "address")
    if body.get("token_id"):
        shares = _decimal(body, "shares", Decimal(0))
        size = state.grant_tokens(address, str(body["token_id"]), shares)
        return json_response({"address": address, "token_id": str(body["token_id"]),
                              "shares": amount_text(size)})
    amount = _decimal(body, "amount", Decimal(0))
    if amount is None or amount < 0:
        raise VenueRejection("amount must be a non-negative decimal")
    balance = state.fund(address, amount)
    return json_response({"address": address, "balance": amount_text(balance)})


@bp.get("/balances/<address>")
def balances(address: str):
    """pUSD and token balances of an address (decimal strings, units)."""
    state = _state()
    with state.lock:
        held = state.ledger.positions.get(address.lower(), {})
        return json_response({
            "address": address,
            "pusd": amount_text(state.balance(address)),
            "positions": {t: amount_text(s) for t, s in held.items() if s},
        })


@bp.post("/trades")
def inject_trade():
    """Inject a wallet's fill (as if a whale traded); answers the RTDS payloads.

    ``published_us`` (epoch µs) is when the venue made the fill visible on the Data
    API and the RTDS feed: a copier's overhead is measured from then.
    """
    body = _body()
    state = _state()
    token_id = body.get("token_id")
    if not token_id:
        market = state.market(_required(body, "condition_id"))
        outcome = body.get("outcome", 0)
        index = market.outcomes.index(outcome) if outcome in market.outcomes else int(outcome)
        token_id = market.token_ids[index]
    fills = state.inject_trade(
        _required(body, "wallet"),
        str(token_id),
        str(body.get("side", "BUY")).upper(),
        price=_decimal(body, "price"),
        size=_decimal(body, "size"),
        counterparty=body.get("counterparty"),
    )
    return json_response({"fills": [state.rtds_payload(f) for f in fills],
                          "published_us": int(max((f.published_at for f in fills),
                                                  default=0.0) * 1_000_000)}, 201)


@bp.post("/redeem")
def redeem():
    """Redeem an address's tokens of a resolved market into pUSD."""
    body = _body()
    paid = _state().redeem(_required(body, "address"), _required(body, "condition_id"))
    return json_response({"paid": str(paid)})


@bp.post("/deposit-wallets")
def deposit_wallet():
    """Register an EOA as an owner of a deposit wallet (signature type 3 orders)."""
    body = _body()
    _state().register_deposit_wallet(_required(body, "wallet"), _required(body, "owner"))
    return json_response({"ok": True})


@bp.post("/eoa-refusal")
def eoa_refusal():
    """Refuse EOA makers (deposit-wallet-only mode); `legacy` makers stay allowed."""
    body = _body()
    legacy = body.get("legacy")
    _state().set_eoa_refusal(bool(body.get("enabled", True)), legacy)
    return json_response({"enabled": _state().config.refuse_eoa_makers})


@bp.post("/faults")
def add_fault():
    """Arm a fault: the next `count` requests under `path` answer `status` after `delay` s."""
    body = _body()
    path = _required(body, "path")
    rule = FaultRule(
        path_prefix=path,
        remaining=int(body.get("count", 1)),
        status=int(body.get("status", 500)),
        delay=float(_decimal(body, "delay", Decimal(0))),
        method=body.get("method"),
        retry_after=int(body["retry_after"]) if body.get("retry_after") is not None else None,
        body=body.get("body"),
    )
    _state().faults.add(rule)
    return json_response({"faults": _state().faults.snapshot()}, 201)


@bp.delete("/faults")
def clear_faults():
    """Disarm every fault."""
    _state().faults.clear()
    return json_response({"faults": []})


@bp.get("/orders")
def received_orders():
    """Every POST /order envelope the venue received, oldest first, with its outcome."""
    state = _state()
    with state.lock:
        return json_response(list(state.received_orders))


@bp.delete("/orders")
def forget_orders():
    """Clear the received-orders log."""
    state = _state()
    with state.lock:
        state.received_orders.clear()
    return json_response([])


@bp.get("/requests")
def request_tally():
    """Requests per endpoint (``METHOD /rule``) per second: {endpoint: {second: n}}.

    ``?since=<epoch seconds>`` keeps the seconds from then on (the last hour is kept).
    """
    since = _decimal(dict(request.args), "since", Decimal(0))
    return json_response(_state().requests.since(float(since or 0)))


@bp.delete("/requests")
def forget_requests():
    """Clear the request tally."""
    _state().requests.clear()
    return json_response({})


@bp.post("/whales/start")
def whales_start():
    """Start the scripted whales {interval?: seconds}."""
    body = _body()
    interval = _decimal(body, "interval")
    _whales().start(float(interval) if interval is not None else None)
    return json_response({"running": True, "whales": _state().whales})


@bp.post("/whales/stop")
def whales_stop():
    """Stop the scripted whales."""
    _whales().stop()
    return json_response({"running": False})


@bp.post("/whales/tick")
def whales_tick():
    """Make one whale trade now."""
    state = _state()
    fills = state.whale_tick()
    return json_response({"fills": [state.rtds_payload(f) for f in fills],
                          "published_us": int(max((f.published_at for f in fills),
                                                  default=0.0) * 1_000_000)}, 201)
