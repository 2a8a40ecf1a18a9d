"""Sandbox-only control API (/_sandbox): set up scenarios and look inside the venue in tests.

Routes (JSON bodies; money and sizes as decimal strings):

* GET    /_sandbox/state                      markets, house and whale addresses, switches
* POST   /_sandbox/reset                      back to the seeded catalog, empty accounts
* POST   /_sandbox/markets                    add a market {question, slug, category, ...};
                                             {question_id, condition_id, collateral}
                                             list an existing on-chain condition
* POST   /_sandbox/chain                      {rpc_url, ctf}: index on-chain holdings
                                             ({rpc_url: ""} stops); with
                                             {deposit_wallet_factory, deposit_wallet_beacon,
                                             operator_key} the relayer deploys and runs
                                             deposit wallets on that chain; contracts
                                             {exchange, collateral, ...}: its addresses
                                             (a new collateral starts the venue afresh on
                                             it); where those exchanges are the dev
                                             chain's, every trade settles on chain
                                             (chain_settlement.py) and /fund mints there
* POST   /_sandbox/markets/<condition>/resolve {winner?: 0|1|"Yes"}: without a winner,
                                             the leading outcome (price at least 0.5) wins;
                                             where trades settle on a dev chain, the payouts
                                             are reported there (chain_oracle.py), so
                                             claims pay on chain
* POST   /_sandbox/lifespans                  {lifetime: seconds (0: off), replenish?: true}:
                                             markets end by themselves (lifespans.py): those
                                             open now one after another over the lifetime,
                                             later ones a lifetime after listing, each
                                             resolving as /resolve does (winner drawn by its
                                             price) and, replenishing, followed by a new
                                             market of its kind (a reset restores
                                             SandboxConfig.market_lifetime)
* POST   /_sandbox/markets/<condition>/fees   {rate, exponent?: 1, taker_only?: true,
                                             rebate_rate?: 0.15}: the market's taker fee
                                             (served as clob-markets fd and Gamma
                                             feeSchedule); {rate: 0} makes it fee-free
* POST   /_sandbox/fund                       {address, amount} pUSD, {address, usdc_e} USDC.e,
                                             or {address, token_id, shares}; pUSD and tokens
                                             reach /balance-allowance after its /update
                                             (seen: true: the cache has them already)
* POST   /_sandbox/markets/<condition>/house  {fair_price?, liquidity?}: recenter the
                                             house's quotes; liquidity false pulls them
                                             (an empty book), true puts them back
* POST   /_sandbox/markets/<condition>/delay  {seconds}: Gamma ``secondsDelay``; marketable
                                             orders answer "delayed" and match after it;
                                             delayed orders cannot be cancelled
* POST   /_sandbox/markets/<condition>/parameters {min_order_size?, tick_size?,
                                             taker_delay_ms?}: the live parameters of
                                             /clob-markets (mos, mts, td), /book and Gamma;
                                             the taker delay delays marketable orders
                                             as secondsDelay does, in ms
* POST   /_sandbox/lifecycle                  {empty_finished_orders?, mined_after?,
                                             confirmed_after?, fail_next?, associate_trades?,
                                             split_parts?, split_every?}: trades go
                                             MATCHED -> MINED -> CONFIRMED (seconds after the
                                             match); the next `fail_next` trades of API-key
                                             orders go RETRYING -> FAILED and are undone;
                                             finished orders answer GET /data/order/<id>
                                             with an empty body (default, as the venue);
                                             associate_trades: false leaves every order's
                                             associate_trades empty (ACCOUNTS.md §12); a
                                             match of an API-key order shows as split_parts
                                             trades in /data/trades, split_every s apart
                                             (size_matched counts it whole at once)
* GET    /_sandbox/balances/<address>         {pusd, positions: {token_id: shares}}
* POST   /_sandbox/trades                     inject a fill {wallet, token_id, side, price?, size?}
                                             (answers its RTDS payloads and published_us)
* POST   /_sandbox/redeem                     {address, condition_id}
* POST   /_sandbox/deposit-wallets            {wallet, owner}: a registered deposit wallet
* POST   /_sandbox/legacy-wallets             {wallet, owner, signature_type: 1|2}: a proxy or
                                             Safe wallet polymarket.com made for owner
* GET    /_sandbox/accounts/<address>         the registry's view: {wallet?, usdc_e,
                                             allowances, operators}
* POST   /_sandbox/approvals                  {owner, token, spender, amount} (ERC-20) or
                                             {owner, token, operator, approved} (ERC-1155),
                                             as an EOA's own on-chain approval
* POST   /_sandbox/relayer                    relayer switches, all optional: step_seconds,
                                             fail_next {state: FAILED|INVALID, message},
                                             quota (429 on submit), down (503),
                                             builder {key, secret, passphrase},
                                             relayer_key_for (address: answers a minted key),
                                             wrong_nonce (two_wallets | always | off: the
                                             execute-params nonce, ACCOUNTS.md §12)
* POST   /_sandbox/strict-accounts            {enabled?, allowlisted?: [EOAs, type 0],
                                             grandfathered?: [proxy/Safe makers, types 1/2]}:
                                             the venue's account rules at order time, ON by
                                             default (SandboxConfig.strict_accounts; a reset
                                             restores the configured value and empties both
                                             lists): makers must be registered deposit
                                             wallets unless allowlisted/grandfathered (else
                                             "maker address not allowed, please use the
                                             deposit wallet flow"), and orders need the
                                             cached balance and allowance of the exchange.
                                             Lists add to what is there; answers {enabled,
                                             allowlisted, grandfathered}
* POST   /_sandbox/rate-tiers                 {tiers?: {address: standard|copper|...|elite},
                                             enforce?}: the tier GET /clob/v1/user/rate-limit-
                                             tier names (standard by default) and, with
                                             enforce, each signer's order and cancel token
                                             buckets (cancel-all: 1 + cancelled, after);
                                             answers {enforce, tiers, refusals, lowest}
* POST   /_sandbox/faults                     {path, count?, status?, delay?, method?, retry_after?,
                                             after?, reset?}: after=true serves the request,
                                             then loses its answer (late, replaced by status,
                                             or reset=true: the connection is reset)
* DELETE /_sandbox/faults                     disarm all faults
* POST   /_sandbox/restart                    {seconds?: 90, post_only_seconds?: 120,
                                             retry_after?: 1}: a matching-engine restart
                                             now: every order-related CLOB endpoint answers
                                             425 + Retry-After, then only post-only orders
                                             and cancels pass (503 post_only_mode, per order
                                             inside /orders batches)
* POST   /_sandbox/mode                       {mode: open|restarting|post_only|cancel_only|
                                             disabled, seconds?, retry_after?}: cancel-only
                                             and disabled answer the venue's 503 texts
* POST   /_sandbox/throttle                   {delay, seconds, path?: "/clob"}: hold every
                                             answer under path for delay s (Cloudflare
                                             queueing); {delay: 0} stops
* GET    /_sandbox/mode                       the mode now, seconds left, the throttle
* GET    /_sandbox/orders                     every POST /order envelope received (and the answer)
* DELETE /_sandbox/orders                     forget them
* GET    /_sandbox/requests?since=<epoch s>   requests per endpoint per second (rate limits)
* DELETE /_sandbox/requests                   forget them
* POST   /_sandbox/whales/start {interval?, styles?}, /_sandbox/whales/stop, /_sandbox/whales/tick
* POST   /_sandbox/styles/tick                 the scripted market maker and scalper, once
* POST   /_sandbox/rtds/mute                  {enabled}: the RTDS feed stops sending trades
                                             (connections stay open and answer pings)
* POST   /_sandbox/rtds/down                  {enabled}: the RTDS feed killed: every
                                             connection closed, new ones refused (503)
* POST   /_sandbox/rtds/activity              {type: trades|orders_matched, state: on|off|
                                             refused}: one activity type gone for good
                                             (subscriptions accepted, nothing sent) or
                                             refused (an error frame answers them)
* POST   /_sandbox/signer-limits             {orders?, cancels?, window?: 10, enforce?}: per
                                             signer, past `orders` order requests (or
                                             `cancels` cancels; a batch counts its orders)
                                             in `window` s, answers carry
                                             Poly-RateLimit-Warning (enforce: 429 instead);
                                             0 switches a limit off
* POST   /_sandbox/list-rules             {keyset_refused?, offset_retired?, position_status?}
                                             (null switches one off; ACCOUNTS.md §12):
                                             Gamma's /markets/keyset and /events/keyset
                                             answer keyset_refused (404, 410...), the offset
                                             lists /markets and /events answer
                                             offset_retired; every /v2/positions row
                                             reports position_status (a status clients do
                                             not know). Always on: keyset pages of at most
                                             100 markets / 500 events, no offset there, and
                                             at most 100 condition_ids a request
* POST   /_sandbox/version                    {version: 2|3}: bump the order version
                                             (orders signed for another: order_version_mismatch)
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation

from eth_utils import is_address
from flask import Blueprint, Response, current_app, request

from devstack.venue import snapshot
from devstack.venue.amounts import TICK_SIZES, to_base
from devstack.venue.catalog import TAGS, FeeSchedule, MarketSeed
from devstack.venue.faults import FaultRule
from devstack.venue.feed import ACTIVITY_STATES, ACTIVITY_TYPES
from devstack.venue.gamma import market_json
from devstack.venue.relay import WRONG_NONCE_MODES
from devstack.venue.responses import error_response, json_response
from devstack.venue.state import Fill, SandboxState, VenueRejection, amount_text
from devstack.venue.versions import VERSIONS
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
                "position_ids": m.position_ids, "ends_at": _epoch(m.ends_at),
            }
            for m in state.catalog.markets_by_id.values()
        ]
        return json_response({
            "chain_id": state.config.chain_id,
            "exchange": state.config.exchange,
            "neg_risk_exchange": state.config.neg_risk_exchange,
            "exchange_v3": state.config.exchange_v3,
            "order_version": state.config.order_version,
            "collateral": state.config.collateral,
            "ctf": state.config.conditional_tokens,
            "position_manager": state.config.position_manager,
            "strict_accounts": state.config.strict_accounts,
            "house": state.house,
            "whales": state.whales,
            "whales_running": _whales().running,
            "styles": {"market_maker": _whales().styles.maker,
                       "scalper": _whales().styles.scalper},
            "lifespans": _lifespans(state),
            "markets": markets,
            "faults": state.faults.snapshot(),
            "mode": state.modes.describe(),
            "lifecycle": state.lifecycle.switches.describe(),
            "list_rules": state.list_rules.describe(),
            "chain": state.chain.describe() if state.chain else None,
            "chain_settlement": (state.chain_settlement.describe()
                                 if state.chain_settlement else None),
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
    if tick not in TICK_SIZES:
        raise VenueRejection(f"tick_size must be one of {', '.join(map(str, TICK_SIZES))}")
    seed = MarketSeed(
        category=category,
        event_slug=str(body.get("event_slug") or slug),
        event_title=str(body.get("event_title") or _required(body, "question")),
        question=_required(body, "question"),
        slug=slug,
        fair_price=fair,
        tick_size=tick,
        neg_risk=bool(body.get("neg_risk", False)),
        position_ids=bool(body.get("position_ids", False)),
        fee_rate=_decimal(body, "fee_rate"),
        group_item_title=str(body.get("group_item_title", "")),
        outcomes=(str(outcomes[0]), str(outcomes[1])),
        days_to_end=int(body.get("days_to_end", 30)),
        min_order_size=_decimal(body, "min_order_size", Decimal(5)),
        question_id=_optional(body, "question_id"),
        condition_id=_optional(body, "condition_id"),
        collateral=_optional(body, "collateral"),
        seconds_delay=_whole(body, "seconds_delay"),
    )
    state = _state()
    liquidity = body.get("liquidity")
    market = state.add_market(seed, house_liquidity=None if liquidity is None else bool(liquidity))
    with state.lock:
        return json_response(market_json(state, market), 201)


@bp.post("/chain")
def attach_chain():
    """Index a chain's ConditionalTokens ({rpc_url, ctf}; an empty rpc_url stops indexing);
    with a deposit-wallet factory, beacon and operator key, run the relayer on that chain."""
    body = _body()
    rpc_url = str(body.get("rpc_url") or "")
    ctf = _required(body, "ctf") if rpc_url else ""
    state = _state()
    try:
        holdings = state.attach_chain(rpc_url, ctf)
        wallets = None
        if rpc_url and body.get("deposit_wallet_factory"):
            contracts = body.get("contracts") or {}
            if not isinstance(contracts, dict):
                raise VenueRejection("contracts must be an object of addresses")
            wallets = state.attach_wallet_chain(
                rpc_url, str(body["deposit_wallet_factory"]),
                _required(body, "deposit_wallet_beacon"), _required(body, "operator_key"),
                {str(k): str(v) for k, v in contracts.items()})
    except ValueError as exc:
        raise VenueRejection(str(exc)) from exc
    return json_response({"chain": holdings.describe() if holdings else None,
                          "wallets": wallets.describe() if wallets else None})


@bp.post("/markets/<condition_id>/resolve")
def resolve_market(condition_id: str):
    """Resolve a market: {winner?: index or outcome name; none: the leading outcome}; with a
    dev chain settling its trades, its payouts are reported there first (502 if refused)."""
    body = _body()
    state = _state()
    market = state.catalog.market(condition_id)
    winner = body.get("winner")
    index: int | None = None
    if isinstance(winner, str) and not winner.isdigit():
        if winner not in market.outcomes:
            raise VenueRejection(f"winner must be one of {list(market.outcomes)}")
        index = market.outcomes.index(winner)
    elif winner is not None:
        try:
            index = int(winner)
        except (TypeError, ValueError) as exc:
            raise VenueRejection("winner must be an outcome index or name") from exc
    with state.lock:
        state.resolve(condition_id, index)
        return json_response(market_json(state, market))


@bp.post("/lifespans")
def lifespans():
    """Make markets end by themselves: {lifetime: seconds, 0 stops; replenish?: true lists a
    successor for each}; answers the schedule and each open market's end (epoch s)."""
    body = _body()
    lifetime = _seconds(body, "lifetime")
    if lifetime is None:
        raise VenueRejection("lifetime is required (seconds, 0: markets never end)")
    replenish = body.get("replenish", True)
    if not isinstance(replenish, bool):
        raise VenueRejection("replenish must be true or false")
    state = _state()
    state.set_lifespans(lifetime, replenish)
    if lifetime:
        current_app.extensions["sandbox_lifespans"].start()
    with state.lock:
        return json_response({**_lifespans(state), "ends": {
            m.condition_id: _epoch(m.ends_at) for m in state.catalog.markets.values()
            if m.ends_at is not None}})


def _epoch(moment: float | None) -> int | None:
    """An epoch moment in whole seconds (the sandbox's JSON has no floats)."""
    return None if moment is None else int(moment)


def _lifespans(state: SandboxState) -> dict:
    """The schedule of market ends: lifetime (decimal seconds, "0": off), replenish."""
    return {"lifetime": format(Decimal(str(state.config.market_lifetime)).normalize(), "f"),
            "replenish": state.config.replenish_markets}


def _whole(body: dict, name: str) -> int:
    value = body.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, int | Decimal) or value < 0:
        raise VenueRejection(f"{name} must be a non-negative whole number")
    return int(value)


@bp.post("/markets/<condition_id>/fees")
def market_fees(condition_id: str):
    """Set a market's taker fee ({rate: 0} or null: fee-free); answers its Gamma object."""
    body = _body()
    rate = _decimal(body, "rate", Decimal(0))
    exponent = _whole(body, "exponent") if "exponent" in body else 1
    rebate = _decimal(body, "rebate_rate", Decimal("0.15"))
    if rate is None or not 0 <= rate < 1 or rebate is None or not 0 <= rebate <= 1:
        raise VenueRejection("rate must be in [0, 1) and rebate_rate in [0, 1]")
    state = _state()
    with state.lock:
        market = state.catalog.market(condition_id)
        market.fees = None if rate == 0 else FeeSchedule.for_category(
            market.category, rate, exponent=exponent,
            taker_only=bool(body.get("taker_only", True)), rebate_rate=rebate)
        return json_response(market_json(state, market))


@bp.post("/markets/<condition_id>/house")
def market_house(condition_id: str):
    """Move the house's quotes of a market: {fair_price?} recenters them, {liquidity:
    false} pulls them (the book empties), {liquidity: true} puts them back."""
    body = _body()
    fair = _decimal(body, "fair_price")
    liquidity = body.get("liquidity")
    if liquidity is not None and not isinstance(liquidity, bool):
        raise VenueRejection("liquidity must be true or false")
    if fair is not None and not 0 < fair < 1:
        raise VenueRejection("fair_price must be between 0 and 1")
    state = _state()
    with state.lock:
        market = state.catalog.market(condition_id)
        if liquidity is not None:
            market.house_liquidity = liquidity
        if fair is not None or liquidity is not None:
            # recentering cancels the house's quotes and rests them again while it quotes
            state.recenter_house(market, market.fair_price if fair is None else fair)
        return json_response(market_json(state, market))


@bp.post("/markets/<condition_id>/delay")
def delay_market(condition_id: str):
    """Set a market's matching delay (Gamma ``secondsDelay``; 0 switches it off)."""
    seconds = _whole(_body(), "seconds")
    state = _state()
    with state.lock:
        market = state.catalog.market(condition_id)
        market.seconds_delay = seconds
        return json_response(market_json(state, market))


@bp.post("/markets/<condition_id>/parameters")
def market_parameters(condition_id: str):
    """Change a market's live parameters (mos, mts, taker delay); answers clob-markets."""
    body = _body()
    minimum = _decimal(body, "min_order_size")
    tick = _decimal(body, "tick_size")
    if minimum is not None and minimum <= 0:
        raise VenueRejection("min_order_size must be positive")
    if tick is not None and tick not in TICK_SIZES:
        raise VenueRejection(f"tick_size must be one of {', '.join(map(str, TICK_SIZES))}")
    state = _state()
    with state.lock:
        market = state.catalog.market(condition_id)
        if minimum is not None:
            market.min_order_size = minimum
        if tick is not None:
            market.tick_size = tick
        if "taker_delay_ms" in body:
            market.taker_delay_ms = _whole(body, "taker_delay_ms")
        return json_response({"mos": market.min_order_size, "mts": market.tick_size,
                              "td": market.taker_delay_ms})


@bp.post("/lifecycle")
def lifecycle():
    """Switch how orders and trades move after placement: settlement steps
    (mined_after, confirmed_after), fail_next, empty_finished_orders, associate_trades
    (false: every order lists none, ACCOUNTS.md §12), and split_parts / split_every (an
    API-key order's match shown as that many trades in /data/trades, seconds apart,
    while size_matched counts it whole).

    See the module docstring.
    """
    body = _body()
    state = _state()
    with state.lock:
        switches = state.lifecycle.switches
        for name in ("empty_finished_orders", "associate_trades"):
            if name in body:
                setattr(switches, name, bool(body[name]))
        if "split_parts" in body:
            parts = _whole(body, "split_parts")
            if parts < 1:
                raise VenueRejection("split_parts must be at least 1")
            switches.split_parts = parts
        for name in ("mined_after", "confirmed_after", "split_every"):
            value = _decimal(body, name)
            if value is not None:
                if value < 0:
                    raise VenueRejection(f"{name} must be non-negative")
                setattr(switches, name, float(value))
        if "fail_next" in body:
            state.lifecycle.fail_next(_whole(body, "fail_next"))
        return json_response(switches.describe())


@bp.post("/fund")
def fund():
    """Credit pUSD ({address, amount}) or outcome tokens ({address, token_id, shares})."""
    body = _body()
    state = _state()
    address = _required(body, "address")
    if body.get("token_id"):
        shares = _decimal(body, "shares", Decimal(0))
        size = state.grant_tokens(address, str(body["token_id"]), shares,
                                  seen=bool(body.get("seen", False)))
        return json_response({"address": address, "token_id": str(body["token_id"]),
                              "shares": amount_text(size)})
    if body.get("usdc_e") is not None:
        usdc_e = _decimal(body, "usdc_e", Decimal(0))
        if usdc_e is None or usdc_e < 0:
            raise VenueRejection("usdc_e must be a non-negative decimal")
        with state.lock:
            held_usdc_e = state.accounts.credit_usdc_e(address, to_base(usdc_e))
        return json_response({"address": address, "usdc_e": amount_text(held_usdc_e)})
    amount = _decimal(body, "amount", Decimal(0))
    if amount is None or amount < 0:
        raise VenueRejection("amount must be a non-negative decimal")
    balance = state.fund(address, amount, seen=bool(body.get("seen", False)))
    return json_response({"address": address, "balance": amount_text(balance)})


@bp.get("/balances/<address>")
def balances(address: str):
    """pUSD and token balances of an address (decimal strings, units)."""
    state = _state()
    with state.lock:
        held = state.ledger.positions.get(address.lower(), {})
        return json_response({
            "address": address,
            "pusd": amount_text(state.ledger.balance(address)),
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
        market = state.catalog.market(_required(body, "condition_id"))
        outcome = body.get("outcome", 0)
        index = market.outcomes.index(outcome) if outcome in market.outcomes else int(outcome)
        token_id = market.token_ids[index]
    wallet, side = _required(body, "wallet"), str(body.get("side", "BUY")).upper()
    price, size = _decimal(body, "price"), _decimal(body, "size")
    with state.lock:
        fills = state.desk.inject(wallet, str(token_id), side, price=price, size=size,
                                  counterparty=body.get("counterparty"), rng=state.rng)
    return _fills_json(state, fills)


def _fills_json(state: SandboxState, fills: list[Fill]) -> Response:
    """201 with the fills' RTDS payloads and when the venue published them (epoch µs)."""
    return json_response({"fills": [state.rtds_payload(f) for f in fills],
                          "published_us": int(max((f.published_at for f in fills),
                                                  default=0.0) * 1_000_000)}, 201)


@bp.post("/redeem")
def redeem():
    """Redeem an address's tokens of a resolved market into pUSD."""
    body = _body()
    state = _state()
    with state.lock:
        paid = state.settlement.redeem(_required(body, "address"),
                                       _required(body, "condition_id"))
    return json_response({"paid": str(paid)})


@bp.post("/deposit-wallets")
def deposit_wallet():
    """Register an EOA as an owner of a deposit wallet (signature type 3 orders)."""
    body = _body()
    state = _state()
    with state.lock:
        state.accounts.register_deposit_wallet(_required(body, "wallet"),
                                               _required(body, "owner"))
    return json_response({"ok": True})


@bp.post("/legacy-wallets")
def legacy_wallet():
    """Register a proxy (signature_type 1) or Safe (2) wallet polymarket.com made for owner."""
    body = _body()
    kind = int(str(body.get("signature_type", 1)))
    if kind not in (1, 2):
        raise VenueRejection("signature_type must be 1 (proxy) or 2 (Safe)")
    state = _state()
    with state.lock:
        state.accounts.register_legacy_wallet(_required(body, "wallet"),
                                              _required(body, "owner"), kind)
    return json_response({"ok": True})


@bp.get("/accounts/<address>")
def account(address: str):
    """The registry's view of an address: its deposit wallet, USDC.e, approvals."""
    state = _state()
    with state.lock:
        state.relayer.advance()
        accounts = state.accounts
        wallet = accounts.wallet(address)
        key = address.lower()
        return json_response({
            "address": address,
            "wallet": None if wallet is None else {
                "owners": sorted(wallet.owners), "deployed": wallet.deployed,
                "registered": wallet.registered, "nonce": wallet.nonce,
                "session_signers": dict(wallet.session_signers),
                "session_scopes": {k: list(v) for k, v in wallet.scopes.items()},
                "fenced": sorted(wallet.fenced)},
            "usdc_e": amount_text(accounts.usdc_e_balance(address)),
            "allowances": [{"token": t, "spender": s, "amount": str(a)}
                           for (o, t, s), a in accounts.allowances.items() if o == key],
            "operators": [{"token": t, "operator": op}
                          for (o, t, op) in sorted(accounts.operators) if o == key],
        })


@bp.post("/approvals")
def approval():
    """Set an approval as the owner's own transaction would (EOA accounts pay their gas)."""
    body = _body()
    state = _state()
    owner, token = _required(body, "owner"), _required(body, "token")
    with state.lock:
        if body.get("operator"):
            state.accounts.set_approval_for_all(owner, token, str(body["operator"]),
                                                bool(body.get("approved", True)))
        else:
            amount = int(str(body.get("amount", 2**256 - 1)))
            state.accounts.approve(owner, token, _required(body, "spender"), amount)
    return json_response({"ok": True})


@bp.post("/relayer")
def relayer_switches():
    """Switch the relayer: step seconds, an armed failure, quota, down, a wrong nonce; add
    credentials."""
    body = _body()
    state = _state()
    answer: dict = {}
    with state.lock:
        relayer = state.relayer
        step = _decimal(body, "step_seconds")
        if step is not None:
            state.config.relayer_step_seconds = float(step)
        failure = body.get("fail_next")
        if failure:
            kind = str(failure.get("state", "FAILED")).upper().removeprefix("STATE_")
            if kind not in ("FAILED", "INVALID"):
                raise VenueRejection("fail_next.state must be FAILED or INVALID")
            relayer.switches.fail_next.append(
                (f"STATE_{kind}", str(failure.get("message") or "transaction failed")))
        if "quota" in body:
            relayer.switches.quota_exceeded = bool(body["quota"])
        if "down" in body:
            relayer.switches.down = bool(body["down"])
        if "wrong_nonce" in body:
            mode = body["wrong_nonce"]
            if mode not in WRONG_NONCE_MODES:
                raise VenueRejection(
                    f"wrong_nonce must be one of {', '.join(WRONG_NONCE_MODES)}")
            relayer.switches.wrong_nonce = mode
        builder = body.get("builder")
        if builder:
            relayer.add_builder(_required(builder, "key"), _required(builder, "secret"),
                                _required(builder, "passphrase"))
        if body.get("relayer_key_for"):
            answer["relayer_key"] = relayer.mint_relayer_key(str(body["relayer_key_for"]))
        answer.update({
            "step_seconds": str(state.config.relayer_step_seconds),
            "quota": relayer.switches.quota_exceeded, "down": relayer.switches.down,
            "wrong_nonce": relayer.switches.wrong_nonce,
            "fail_next": [list(f) for f in relayer.switches.fail_next],
        })
    return json_response(answer)


def _addresses(body: dict, name: str) -> set[str]:
    """An optional list of addresses in the body, lower-case; 400 naming the field if not."""
    raw = body.get(name, [])
    if not isinstance(raw, list) or not all(isinstance(a, str) and is_address(a) for a in raw):
        raise VenueRejection(f"{name} must be a list of addresses")
    return {a.lower() for a in raw}


@bp.post("/strict-accounts")
def strict_accounts():
    """The venue's account rules at order time (on by default): switch them, and add
    allowlisted EOAs (type 0) or grandfathered proxy/Safe makers (types 1/2)."""
    body = _body()
    enabled = body.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        raise VenueRejection("enabled must be true or false")
    allowlisted, grandfathered = _addresses(body, "allowlisted"), _addresses(body, "grandfathered")
    state = _state()
    with state.lock:
        if enabled is not None:
            state.config.strict_accounts = enabled
        state.accounts.allowlisted |= allowlisted
        state.accounts.grandfathered |= grandfathered
        return json_response({"enabled": state.config.strict_accounts,
                              "allowlisted": sorted(state.accounts.allowlisted),
                              "grandfathered": sorted(state.accounts.grandfathered)})


def _switch() -> bool:
    """The body's required ``enabled`` switch."""
    enabled = _body().get("enabled")
    if not isinstance(enabled, bool):
        raise VenueRejection("enabled must be true or false")
    return enabled


@bp.post("/rtds/mute")
def mute_rtds():
    """Switch the RTDS feed's silent failure on or off (pings answered, no trades)."""
    enabled = _switch()
    _state().feed.muted = enabled
    return json_response({"muted": enabled})


@bp.post("/rtds/down")
def take_rtds_down():
    """Kill the RTDS feed (connections closed, new ones refused) or bring it back."""
    enabled = _switch()
    _state().feed.take_down(enabled)
    return json_response({"down": enabled})


@bp.post("/rtds/activity")
def rtds_activity():
    """Turn one RTDS activity type on, off for good, or refused (ACCOUNTS.md §12)."""
    body = _body()
    kind, switch = body.get("type"), body.get("state")
    if kind not in ACTIVITY_TYPES:
        raise VenueRejection(f"type must be one of {', '.join(ACTIVITY_TYPES)}")
    if switch not in ACTIVITY_STATES:
        raise VenueRejection(f"state must be one of {', '.join(ACTIVITY_STATES)}")
    feed = _state().feed
    feed.activity[kind] = switch
    return json_response({"activity": dict(feed.activity)})


@bp.post("/signer-limits")
def signer_limits():
    """Set the per-signer order and cancel limits (warning header past them)."""
    body = _body()
    limits = _state().signer_limits
    for name in ("orders", "cancels"):
        if name in body:
            setattr(limits, name, _whole(body, name))
    window = _seconds(body, "window")
    if window is not None:
        if window <= 0:
            raise VenueRejection("window must be positive")
        limits.window = window
    if "enforce" in body:
        limits.enforce = bool(body["enforce"])
    return json_response(limits.describe())


@bp.post("/rate-tiers")
def set_rate_tiers():
    """Set signers' rate-limit tiers and switch their token buckets' enforcement."""
    body = _body()
    tiers = _state().rate_tiers
    given = body.get("tiers", {})
    if not isinstance(given, dict) or not all(is_address(a) for a in given):
        raise VenueRejection("tiers must map addresses to tier names")
    for address, name in given.items():
        try:
            tiers.set_tier(address, str(name).lower())
        except ValueError as exc:
            raise VenueRejection(str(exc)) from exc
    if "enforce" in body:
        if not isinstance(body["enforce"], bool):
            raise VenueRejection("enforce must be true or false")
        tiers.enforce = body["enforce"]
    return json_response(tiers.describe())


def _refusal(body: dict, name: str) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, int) or not 400 <= value <= 599:
        raise VenueRejection(f"{name} must be an HTTP error status or null")
    return value


@bp.post("/list-rules")
def list_rules():
    """Turn Gamma's keyset or offset lists off, or make /v2/positions report a status."""
    body = _body()
    rules = _state().list_rules
    for name in ("keyset_refused", "offset_retired"):
        if name in body:
            setattr(rules, name, _refusal(body, name))
    if "position_status" in body:
        status = body["position_status"]
        if status is not None and not (isinstance(status, str) and status.strip()):
            raise VenueRejection("position_status must be a non-empty text or null")
        rules.position_status = status
    return json_response(rules.describe())


@bp.post("/version")
def set_order_version():
    """Announce another order version on GET /version (a version bump)."""
    body = _body()
    version = body.get("version")
    if version not in VERSIONS:
        raise VenueRejection(f"version must be one of {', '.join(map(str, VERSIONS))}")
    state = _state()
    with state.lock:
        state.config.order_version = version
    return json_response({"version": version})


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
        after=bool(body.get("after", False)),
        reset=bool(body.get("reset", False)),
    )
    _state().faults.add(rule)
    return json_response({"faults": _state().faults.snapshot()}, 201)


@bp.delete("/faults")
def clear_faults():
    """Disarm every fault."""
    _state().faults.clear()
    return json_response({"faults": []})


def _seconds(body: dict, name: str, default: Decimal | None = None) -> float | None:
    value = _decimal(body, name, default)
    if value is not None and value < 0:
        raise VenueRejection(f"{name} must not be negative")
    return None if value is None else float(value)


@bp.post("/restart")
def restart():
    """Start a matching-engine restart: 425 for `seconds`, then post-only."""
    body = _body()
    modes = _state().modes
    modes.restart(_seconds(body, "seconds", Decimal(90)) or 0.0,
                  _seconds(body, "post_only_seconds", Decimal(120)) or 0.0,
                  int(_seconds(body, "retry_after", Decimal(1)) or 0))
    return json_response(modes.describe(), 201)


@bp.post("/mode")
def set_mode():
    """Switch the trading mode (open, restarting, post_only, cancel_only, disabled)."""
    body = _body()
    retry = _seconds(body, "retry_after")
    try:
        _state().modes.set(str(body.get("mode", "")), _seconds(body, "seconds"),
                           None if retry is None else int(retry))
    except ValueError as exc:
        raise VenueRejection(str(exc)) from exc
    return json_response(_state().modes.describe())


@bp.get("/mode")
def get_mode():
    """The trading mode now."""
    return json_response(_state().modes.describe())


@bp.post("/throttle")
def throttle():
    """Hold answers under a path for `delay` seconds during the next `seconds`."""
    body = _body()
    _state().modes.throttle(_seconds(body, "delay", Decimal(0)) or 0.0,
                            _seconds(body, "seconds", Decimal(60)) or 0.0,
                            str(body.get("path") or "/clob"))
    return json_response(_state().modes.describe())


@bp.get("/orders")
def received_orders():
    """Every POST /order envelope the venue received, oldest first, with its outcome."""
    state = _state()
    with state.lock:
        return json_response(list(state.desk.received_orders))


@bp.delete("/orders")
def forget_orders():
    """Clear the received-orders log."""
    state = _state()
    with state.lock:
        state.desk.received_orders.clear()
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
    """Start the scripted whales {interval?: seconds, styles?: true (the scripted market
    maker and scalper trade on the same ticks, and every whale buys once on the first)}."""
    body = _body()
    interval = _decimal(body, "interval")
    _whales().start(float(interval) if interval is not None else None,
                    styles=bool(body.get("styles")))
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
    return _fills_json(state, state.whale_tick())


@bp.post("/styles/tick")
def styles_tick():
    """Make the scripted market maker and scalper trade once now (their fills)."""
    return _fills_json(_state(), _whales().styles.tick())


@bp.post("/snapshot")
def save_snapshot():
    """Write the venue's state to the file it was started with (``copytrade sandbox --state``)."""
    path = current_app.extensions.get("sandbox_state_file")
    if not path:
        raise VenueRejection("this venue was started without a state file (--state)", 409)
    return json_response({"path": str(snapshot.save(_state(), path))})
