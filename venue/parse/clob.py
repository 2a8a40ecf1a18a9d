"""CLOB API JSON -> models: books, prices and other market data, API creds, orders, cancels."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from venue.models import (
    ApiCreds,
    BalanceAllowance,
    CancelResult,
    FeeSchedule,
    Level,
    MarketParameters,
    OpenOrder,
    OpenOrdersPage,
    OrderBook,
    PostOrderResult,
    PriceHistoryPoint,
)
from venue.parse.values import (
    MalformedResponse,
    as_text,
    dec,
    opt_int,
    pick,
    req_dec,
    require_mapping,
)

# --- market data ---------------------------------------------------------------------------


def _levels(rows: Iterable[Mapping[str, Any]]) -> tuple[Level, ...]:
    return tuple(Level(price=req_dec(r["price"]), size=req_dec(r["size"])) for r in rows)


def parse_book(body: Any) -> OrderBook:
    """CLOB ``/book`` (or a WS ``book`` message)."""
    body = require_mapping(body, "book")
    try:
        neg_risk = body.get("neg_risk")
        return OrderBook(
            market=as_text(body.get("market")),
            asset_id=as_text(body["asset_id"]),
            timestamp_ms=opt_int(body.get("timestamp")) or 0,
            hash=as_text(body.get("hash")),
            bids=_levels(body.get("bids") or ()),
            asks=_levels(body.get("asks") or ()),
            min_order_size=dec(body.get("min_order_size")),
            tick_size=dec(body.get("tick_size")),
            neg_risk=None if neg_risk is None else bool(neg_risk),
            last_trade_price=dec(body.get("last_trade_price")),
        )
    except (KeyError, TypeError) as exc:
        raise MalformedResponse(f"bad book: {exc}") from exc


def _field_dec(body: Any, *keys: str) -> Decimal:
    body = require_mapping(body, keys[0])
    value = dec(pick(body, *keys))
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
    body = require_mapping(body, "neg_risk")
    if "neg_risk" not in body:
        raise MalformedResponse("missing neg_risk")
    return bool(body["neg_risk"])


def parse_fee_rate_bps(body: Any) -> int:
    """CLOB ``/fee-rate`` -> ``base_fee`` in basis points (0 when absent)."""
    body = require_mapping(body, "fee-rate")
    return opt_int(pick(body, "base_fee", "fee_rate_bps")) or 0


def parse_market_fees(body: Any) -> FeeSchedule | None:
    """CLOB ``/clob-markets/<cid>`` -> its ``fd:{r,e,to}`` fee model (None: fee-free)."""
    body = require_mapping(body, "clob-markets")
    fd = body.get("fd")
    if not fd:  # absent (or empty) means the market charges no fee
        return None
    fd = require_mapping(fd, "clob-markets fd")
    rate = req_dec(fd.get("r"))
    if rate <= 0:
        return None
    return FeeSchedule(rate=rate, exponent=req_dec(fd.get("e")),
                       taker_only=bool(fd.get("to", True)), rebate_rate=Decimal(0))


def parse_market_parameters(body: Any) -> MarketParameters:
    """CLOB ``/clob-markets/<cid>`` -> tick ``mts``, minimum ``mos``, fees ``fd``, ``nr`` and
    the taker delay (``td``, milliseconds: the field's name and unit are not documented yet,
    ACCOUNTS.md §11; the sandbox serves it so)."""
    body = require_mapping(body, "clob-markets")
    delay = dec(pick(body, "td", "taker_delay_ms"))
    neg_risk = body.get("nr")
    return MarketParameters(
        condition_id=as_text(body.get("c")),
        tick_size=dec(body.get("mts")),
        min_order_size=dec(body.get("mos")),
        fees=parse_market_fees(body),
        neg_risk=None if neg_risk is None else bool(neg_risk),
        taker_delay=(delay or Decimal(0)) / 1000,
    )


def parse_prices_history(body: Any) -> list[PriceHistoryPoint]:
    """CLOB ``/prices-history`` -> points of (unix seconds, price)."""
    body = require_mapping(body, "prices-history")
    return [
        PriceHistoryPoint(t=int(p["t"]), p=req_dec(p["p"])) for p in body.get("history") or ()
    ]


def parse_server_time(body: Any) -> int:
    """CLOB ``/time`` -> unix seconds (a bare number, or an object on some deployments)."""
    if isinstance(body, Mapping):
        body = pick(body, "time", "timestamp")
    value = opt_int(body)
    if value is None:
        raise MalformedResponse("missing server time")
    return value


def parse_version(body: Any) -> int:
    """CLOB ``/version`` -> ``version``."""
    body = require_mapping(body, "version")
    return opt_int(body.get("version")) or 0


# --- auth and trading ----------------------------------------------------------------------


def parse_api_creds(body: Any, address: str) -> ApiCreds:
    """``/auth/api-key`` or ``/auth/derive-api-key`` answer, bound to the signer address."""
    body = require_mapping(body, "api creds")
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
    row = require_mapping(row, "order")
    return OpenOrder(
        id=as_text(row.get("id")),
        status=as_text(row.get("status")),
        owner=as_text(row.get("owner")),
        maker_address=as_text(row.get("maker_address")),
        market=as_text(row.get("market")),
        asset_id=as_text(row.get("asset_id")),
        side=as_text(row.get("side")).upper(),
        original_size=req_dec(row.get("original_size")),
        size_matched=req_dec(row.get("size_matched")),
        price=req_dec(row.get("price")),
        outcome=as_text(row.get("outcome")),
        expiration=opt_int(row.get("expiration")) or 0,
        order_type=as_text(row.get("order_type")),
        associate_trades=tuple(str(t) for t in row.get("associate_trades") or ()),
        created_at=opt_int(row.get("created_at")) or 0,
    )


def parse_open_orders(body: Any) -> OpenOrdersPage:
    """``/data/orders`` envelope ``{limit, next_cursor, count, data}`` (or a bare array)."""
    if isinstance(body, list):
        return OpenOrdersPage(orders=tuple(parse_open_order(r) for r in body), next_cursor="LTE=")
    body = require_mapping(body, "orders")
    return OpenOrdersPage(
        orders=tuple(parse_open_order(r) for r in body.get("data") or ()),
        next_cursor=as_text(body.get("next_cursor")) or "LTE=",
    )


def parse_post_order(body: Any) -> PostOrderResult:
    """``POST /order`` answer."""
    body = require_mapping(body, "post order")
    return PostOrderResult(
        success=bool(body.get("success", False)),
        order_id=as_text(body.get("orderID")),
        status=as_text(body.get("status")).lower(),
        making_amount=dec(body.get("makingAmount")),
        taking_amount=dec(body.get("takingAmount")),
        error_msg=as_text(body.get("errorMsg")),
        transactions_hashes=tuple(str(h) for h in body.get("transactionsHashes") or ()),
        trade_ids=tuple(str(t) for t in body.get("tradeIDs") or ()),
    )


def parse_cancel(body: Any) -> CancelResult:
    """Cancel answer ``{canceled: [...], not_canceled: {id: reason}}``."""
    body = require_mapping(body, "cancel")
    not_canceled = body.get("not_canceled") or {}
    return CancelResult(
        canceled=tuple(str(i) for i in body.get("canceled") or ()),
        not_canceled={str(k): str(v) for k, v in dict(not_canceled).items()},
    )


def parse_balance_allowance(body: Any) -> BalanceAllowance:
    """``{"balance": "<base units>", "allowances": {spender: "<base units>"}}``; spenders
    keyed lower-case (the venue's case varies)."""
    row = require_mapping(body, "balance-allowance")
    allowances = row.get("allowances") or {}
    if not isinstance(allowances, Mapping):
        raise MalformedResponse("balance-allowance allowances is not an object")
    return BalanceAllowance(
        balance=Decimal(str(row["balance"])).scaleb(-6),
        allowances={str(spender).lower(): int(str(amount))
                    for spender, amount in allowances.items()})
