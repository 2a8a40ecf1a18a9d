"""Walking a live order book: what a taker order of some size would get, level by level.

Shared by previews, live orders (protective limits, fee estimates) and the paper book
(simulated fills). Prices and sizes are Decimals straight from the venue's text; fees
follow the market's fee model per level, rounded to 5 decimals the way the venue charges
them (venue.fees).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from venue.models import FeeSchedule, Level, OrderBook, Side

BASE_UNIT = Decimal("0.000001")
ZERO = Decimal(0)


@dataclass(frozen=True)
class Fill:
    """Shares taken at one price level."""

    price: Decimal
    shares: Decimal

    @property
    def value(self) -> Decimal:
        """pUSD moved for these shares."""
        return self.price * self.shares


@dataclass(frozen=True)
class Walk:
    """The fills a taker order would get against a book snapshot."""

    side: Side
    fills: tuple[Fill, ...]
    complete: bool  # the whole requested size (or budget) was available

    @property
    def shares(self) -> Decimal:
        """Shares filled."""
        total = ZERO
        for fill in self.fills:  # a loop, not sum() over a generator: planning reads it often
            total += fill.shares
        return total

    @property
    def value(self) -> Decimal:
        """pUSD paid (buy) or received (sell), fees excluded, to the base unit."""
        total = ZERO
        for fill in self.fills:
            total += fill.price * fill.shares
        return total.quantize(BASE_UNIT, ROUND_CEILING if self.side is Side.BUY else ROUND_FLOOR)

    @property
    def average_price(self) -> Decimal | None:
        """Volume-weighted price of the fills, None when nothing fills."""
        shares = self.shares
        return (self.value / shares) if shares else None

    @property
    def worst_price(self) -> Decimal | None:
        """The last (least favourable) level touched."""
        return self.fills[-1].price if self.fills else None

    def fee(self, schedule: FeeSchedule | None) -> Decimal:
        """Taker fee of these fills under ``schedule`` (0 when fees are off)."""
        return taker_fee(schedule, self.fills)


def taker_fee(schedule: FeeSchedule | None, fills: tuple[Fill, ...] | list[Fill]) -> Decimal:
    """Sum of the per-level taker fees, each rounded as the venue charges it (venue.fees)."""
    if schedule is None:
        return ZERO
    total = ZERO
    for fill in fills:  # a loop, not sum() over a generator: every live BUY checks its fee
        total += schedule.taker_fee(fill.shares, fill.price)
    return total


def levels_best_first(book: OrderBook, side: Side | str) -> list[Level]:
    """The levels a taker on ``side`` trades against, best first (asks for a buy)."""
    buying = Side.parse(side) is Side.BUY
    return list(book.asks_best_first() if buying else book.bids_best_first())


def walk(book: OrderBook, side: Side | str, *, shares: Decimal | None = None,
         budget: Decimal | None = None, limit: Decimal | None = None) -> Walk:
    """Take ``shares`` (or spend ``budget`` pUSD, buys only) from the book, up to ``limit``."""
    if (shares is None) == (budget is None):
        raise ValueError("give shares or budget")
    side = Side.parse(side)
    buying = side is Side.BUY
    fills: list[Fill] = []
    left_shares = shares
    left_budget = budget
    # Sorted once per book (the book keeps them): one book prices every follower's order.
    for level in book.asks_best_first() if buying else book.bids_best_first():
        price = level.price
        if limit is not None and (price > limit if buying else price < limit):
            break
        if level.size <= 0:
            continue
        if left_budget is not None:
            affordable = (left_budget / price).quantize(BASE_UNIT, ROUND_FLOOR)
            take = min(affordable, level.size)
            if take <= 0:
                break
            left_budget -= (take * price).quantize(BASE_UNIT, ROUND_CEILING)
            fills.append(Fill(price, take))
            if left_budget <= 0:
                break
        else:
            assert left_shares is not None
            take = min(left_shares, level.size)
            left_shares -= take
            fills.append(Fill(price, take))
            if left_shares <= 0:
                break
    if left_budget is not None:
        complete = left_budget <= 0 or (
            bool(fills) and left_budget < fills[-1].price * BASE_UNIT * 2)
    else:
        complete = left_shares is not None and left_shares <= 0
    return Walk(side=side, fills=tuple(fills), complete=complete)


def midpoint(book: OrderBook) -> Decimal | None:
    """Mean of the best bid and ask, None when a side is empty."""
    return book.midpoint


def mark_price(book: OrderBook) -> Decimal | None:
    """The price positions are valued at: midpoint, else the one side, else the last trade."""
    if book.midpoint is not None:
        return book.midpoint
    if book.best_bid is not None:
        return book.best_bid
    if book.best_ask is not None:
        return book.best_ask
    return book.last_trade_price
