"""CLOB ``GET /data/trades`` and the single-order answer: what became of an order's fills.

Trade statuses (ACCOUNTS.md §7.3): ``MATCHED`` → ``MINED`` → ``CONFIRMED`` (final),
``RETRYING`` (not final), ``FAILED`` (final: the fill never happened). The user stream's
``TRADE_STATUS_`` prefix and ``MATCHED_NOT_BROADCASTED`` are read as the REST words.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from venue import fees
from venue.models import FeeSchedule, OpenOrder
from venue.parse.clob import parse_open_order
from venue.parse.values import as_text, opt_int, req_dec, require_mapping

TRADE_MATCHED, TRADE_MINED, TRADE_CONFIRMED, TRADE_RETRYING, TRADE_FAILED = (
    "MATCHED", "MINED", "CONFIRMED", "RETRYING", "FAILED")
BPS = Decimal(10_000)
TRADE_STATUSES = (TRADE_MATCHED, TRADE_MINED, TRADE_CONFIRMED, TRADE_RETRYING, TRADE_FAILED)


@dataclass(frozen=True, slots=True)
class MakerFill:
    """One maker order's part of a trade."""

    order_id: str
    asset_id: str
    matched_amount: Decimal  # shares
    price: Decimal           # in the maker's own token


@dataclass(frozen=True, slots=True)
class VenueTrade:
    """One CLOB trade: a taker order against its makers, with its settlement status."""

    id: str
    taker_order_id: str
    asset_id: str
    side: str
    size: Decimal
    price: Decimal
    status: str
    match_time: int
    transaction_hash: str
    maker_orders: tuple[MakerFill, ...]
    market: str = ""          # condition id
    fee_rate_bps: int | None = None  # the taker fee rate applied (None: not in the record)

    def fee_of(self, order_id: str, schedule: FeeSchedule | None) -> Decimal:
        """The fee this trade charged ``order_id``: taker pays per maker fill, makers 0.

        The rate is the trade's own ``fee_rate_bps`` (the market's when the record has
        none); the exponent is the market's (``schedule``: ``fd.e``, else 1). Each maker
        fill is one fee, rounded as the venue rounds it (venue.fees).
        """
        if self.taker_order_id.lower() != order_id.lower():
            return Decimal(0)
        if self.fee_rate_bps is not None:
            rate = Decimal(self.fee_rate_bps) / BPS
        else:
            rate = schedule.rate if schedule is not None else Decimal(0)
        if rate <= 0:
            return Decimal(0)
        exponent = schedule.exponent if schedule is not None else Decimal(1)
        # p(1-p) is the same for the maker's token or its complement, so a mint or merge
        # maker's own price serves as well as the taker's.
        fills = [(m.matched_amount, m.price) for m in self.maker_orders] or [
            (self.size, self.price)]
        return sum((fees.taker_fee(rate, exponent, shares, price) for shares, price in fills),
                   Decimal(0))

    def fill_of(self, order_id: str) -> tuple[Decimal, Decimal] | None:
        """(shares, pUSD value) this trade filled for ``order_id``, or None if not a party.

        A taker's value is priced per maker: a maker of the other outcome (a mint or a
        merge) traded at the complement of the taker's price.
        """
        wanted = order_id.lower()
        if self.taker_order_id.lower() == wanted:
            value = sum((m.matched_amount * (m.price if m.asset_id == self.asset_id
                                             else 1 - m.price)
                         for m in self.maker_orders), Decimal(0))
            if not self.maker_orders:
                value = self.size * self.price
            return self.size, value
        shares = value = Decimal(0)
        for maker in self.maker_orders:
            if maker.order_id.lower() == wanted:
                shares += maker.matched_amount
                value += maker.matched_amount * maker.price
        return (shares, value) if shares > 0 else None


def trade_status(value: Any) -> str:
    """A trade status in the REST words (``TRADE_STATUS_MINED`` → ``MINED``)."""
    status = as_text(value).upper().removeprefix("TRADE_STATUS_")
    return TRADE_MATCHED if status == "MATCHED_NOT_BROADCASTED" else status


def parse_trade(row: Any) -> VenueTrade:
    """One ``/data/trades`` row."""
    row = require_mapping(row, "trade")
    makers = tuple(
        MakerFill(order_id=as_text(m.get("order_id")), asset_id=as_text(m.get("asset_id")),
                  matched_amount=req_dec(m.get("matched_amount")), price=req_dec(m.get("price")))
        for m in (require_mapping(m, "maker order") for m in row.get("maker_orders") or ()))
    return VenueTrade(
        id=as_text(row.get("id")), taker_order_id=as_text(row.get("taker_order_id")),
        asset_id=as_text(row.get("asset_id")), side=as_text(row.get("side")).upper(),
        size=req_dec(row.get("size")), price=req_dec(row.get("price")),
        status=trade_status(row.get("status")), match_time=opt_int(row.get("match_time")) or 0,
        transaction_hash=as_text(row.get("transaction_hash")), maker_orders=makers,
        market=as_text(row.get("market")), fee_rate_bps=opt_int(row.get("fee_rate_bps")))


def parse_trades(body: Any) -> tuple[tuple[VenueTrade, ...], str]:
    """``/data/trades`` envelope ``{limit, next_cursor, count, data}`` (or a bare array)."""
    if isinstance(body, list):
        return tuple(parse_trade(r) for r in body), "LTE="
    body = require_mapping(body, "trades")
    return (tuple(parse_trade(r) for r in body.get("data") or ()),
            as_text(body.get("next_cursor")) or "LTE=")


def parse_order_or_finished(body: Any) -> OpenOrder | None:
    """``/data/order/<id>``: the order, or None for the empty answer of a finished order."""
    if body is None or body == "" or body == {}:
        return None
    return parse_open_order(body)
