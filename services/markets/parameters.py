"""A market's live trading parameters: the one place previews, orders, copies, sells and the
copy rules' minimum (the dust rule) get a market's tick size, minimum order size, fees and
taker delay.

The venue publishes them per market in CLOB ``/clob-markets/<cid>`` (``mts``, ``mos``,
``fd``: ACCOUNTS.md §11, "Live market parameters") and changes them while a market trades,
so they are read there, cached for ``venue.clob.LIVE_PARAMETER_TTL`` (10 s), and only when
the CLOB cannot answer taken from the book and then Gamma. Orders read them fresh
(``live(..., fresh=True)``), so an order whose preview saw other parameters is planned
again under the new ones, and refused only if it breaks them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal

from services.platform import venues
from venue.client import gamma_fees
from venue.errors import VenueError
from venue.models import FeeSchedule, MarketParameters, OrderBook
from venue.models import Market as GammaMarket

log = logging.getLogger(__name__)

DEFAULT_TICK = Decimal("0.01")
DEFAULT_MIN_SIZE = Decimal(5)


@dataclass(frozen=True)
class Limits:
    """What an order of the market must respect, and where each value came from."""

    tick_size: Decimal
    min_order_size: Decimal
    neg_risk: bool
    fees: FeeSchedule | None
    taker_delay: Decimal
    live: bool  # True when read from /clob-markets (else the book and Gamma)


def live(condition_id: str, *, fresh: bool = False) -> MarketParameters | None:
    """The market's live parameters (cached 10 s; ``fresh``: read now); None when the CLOB
    cannot say (the caller falls back to the book and Gamma through ``limits``)."""
    if not condition_id:
        return None
    try:
        return venues.client().clob.market_parameters(condition_id, fresh=fresh)
    except VenueError as exc:
        log.info("no live parameters for market %s: %s", condition_id, exc)
        return None


def limits(params: MarketParameters | None, book: OrderBook | None,
           market: GammaMarket | None) -> Limits:
    """The market's limits: the live parameters first, then the book, then Gamma (pure)."""
    def first(*values: Decimal | None, default: Decimal) -> Decimal:
        return next((v for v in values if v), default)

    tick = first(params.tick_size if params else None, book.tick_size if book else None,
                 market.tick_size if market else None, default=DEFAULT_TICK)
    minimum = first(params.min_order_size if params else None,
                    book.min_order_size if book else None,
                    market.min_order_size if market else None, default=DEFAULT_MIN_SIZE)
    neg_risk = next((v for v in (params.neg_risk if params else None,
                                 book.neg_risk if book else None,
                                 market.neg_risk if market else None) if v is not None), False)
    # The CLOB could not say: Gamma's copy of the same schedule.
    fees = params.fees if params is not None else gamma_fees(market) if market else None
    return Limits(tick_size=tick, min_order_size=minimum, neg_risk=bool(neg_risk), fees=fees,
                  taker_delay=params.taker_delay if params else Decimal(0),
                  live=params is not None)


def of(market: GammaMarket, book: OrderBook | None = None, *, fresh: bool = False) -> Limits:
    """A Gamma market's limits now: its live parameters (cached 10 s; ``fresh``: read now),
    then the book's and Gamma's own."""
    return limits(live(market.condition_id, fresh=fresh), book, market)


def min_order_size(condition_id: str, book: OrderBook | None = None,
                   market: GammaMarket | None = None) -> Decimal:
    """The market's minimum order size now (the copy rules' dust threshold)."""
    return limits(live(condition_id), book, market).min_order_size
