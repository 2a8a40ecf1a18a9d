"""Turning a PlaceOrderRequest into the exact order we would send, priced from the live book.

One function, ``plan_order``, serves previews and placement alike, so a preview shows the
very order that is then signed. Rules (README "Orders"):

* ``size`` is always in shares, with at most 2 decimals (the venue's share granularity);
  extra decimals are refused, never rounded away silently.
* Limit orders go out GTC at ``price``, which must lie on the market's tick grid within
  [tick, 1 - tick]; ``size`` must reach the market's minimum order size.
* Market orders go out FOK (copy trades and position sells may ask for FAK) at a
  protective limit: the worst book level the size needs, moved by ``PROTECTION_BPS``
  (at least one tick) against the trader. A market BUY is sent, as on the venue, as a
  pUSD budget: the walked cost floored to the cent, so it never buys past the shares
  asked; it must be at least 1 pUSD.
* A market BUY may instead name ``amount``, the pUSD to spend (cents, at least 1 pUSD):
  the budget is the amount less the taker fee the walk expects, so budget plus fee never
  exceed it; ``size`` is then the shares that budget is expected to buy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

from services.markets import catalogue, order_book, parameters
from services.markets.order_book import Walk
from services.platform import errors, numbers, venues
from venue.errors import VenueNotFound
from venue.models import FeeSchedule, MarketParameters, OrderBook, Side
from venue.models import Market as GammaMarket
from venue.signing import snap_to_tick

SIDES = ("buy", "sell")  # the API's words for the sides (Side.lower())
ORDER_TYPES = ("market", "limit")
TIME_IN_FORCE = ("FOK", "FAK")
SIZE_DECIMALS = 2
CENT = Decimal("0.01")
PROTECTION_BPS = Decimal(300)  # how far past the book's worst needed level a market order may fill
MIN_MARKET_BUY = Decimal(1)    # the venue's minimum for marketable BUY orders, in pUSD
BPS = Decimal(10000)


@dataclass(frozen=True)
class MarketInfo:
    """What a ticket needs to know about the token's market."""

    token_id: str
    market_slug: str
    market_title: str
    outcome: str
    condition_id: str
    tick_size: Decimal
    min_order_size: Decimal
    neg_risk: bool
    fee_schedule: FeeSchedule | None
    accepting_orders: bool
    closed: bool
    taker_delay: Decimal = Decimal(0)  # seconds a marketable order waits (not cancellable)


@dataclass(frozen=True)
class OrderPlan:
    """The order as it would be signed, and what it is expected to do."""

    market: MarketInfo
    side: Side
    order_type: str
    size: Decimal                 # shares asked for
    limit_price: Decimal          # limit price, or the protective limit of a market order
    time_in_force: str            # GTC | FOK | FAK
    budget: Decimal | None        # pUSD a market BUY may spend
    walk: Walk                    # what would match right now
    best_bid: Decimal | None
    best_ask: Decimal | None
    midpoint: Decimal | None
    book: OrderBook = field(repr=False)
    post_only: bool = False       # a resting limit order the venue refuses if it would match
    amount: Decimal | None = None  # pUSD a spend-sized market BUY was asked to spend, fee included

    @property
    def estimated_shares(self) -> Decimal:
        """Shares expected: all for a limit order (the rest rests), else the walked shares."""
        return self.size if self.order_type == "limit" else self.walk.shares

    @property
    def expected_price(self) -> Decimal:
        """The limit for a limit order, the walked average for a market order."""
        if self.order_type == "limit":
            return self.limit_price
        return self.walk.average_price or self.limit_price

    @property
    def estimated_cost(self) -> Decimal:
        """pUSD paid (buy) or received (sell), fees excluded."""
        if self.order_type == "limit":
            return (self.size * self.limit_price).quantize(order_book.BASE_UNIT)
        return self.walk.value

    @property
    def estimated_fee(self) -> Decimal:
        """Taker fee of the part that matches now (resting limit parts pay none)."""
        return self.walk.fee(self.market.fee_schedule)

    @property
    def max_collateral(self) -> Decimal:
        """The most pUSD a BUY can take from the wallet, fee included (0 for sells)."""
        if self.side is not Side.BUY:
            return Decimal(0)
        spend = self.budget if self.budget is not None else self.size * self.limit_price
        return spend + self.estimated_fee

    @property
    def slippage_bps(self) -> Decimal | None:
        """How much worse than the midpoint the expected price is, in basis points."""
        if self.midpoint is None or not self.midpoint:
            return None
        diff = self.expected_price - self.midpoint
        if self.side is Side.SELL:
            diff = -diff
        return (diff / self.midpoint * BPS).quantize(CENT)

    def confirmation(self) -> str:
        """One line a person can confirm."""
        verb = "Buy" if self.side is Side.BUY else "Sell"
        what = f"'{self.market.outcome}' in \"{self.market.market_title}\""
        cost = numbers.money(self.estimated_cost)
        fee = self.estimated_fee
        fee_text = f" + {numbers.money(fee)} fee" if fee else ""
        tick = self.market.tick_size
        if self.order_type == "limit":
            return (f"{verb} {numbers.shares(self.size)} shares of {what} at limit "
                    f"{numbers.price(self.limit_price, tick)} ({self._resting()}) for up to "
                    f"{cost}{fee_text}.")
        if self.amount is not None:
            return (f"{verb} about {numbers.shares(self.estimated_shares)} shares of {what} at "
                    f"market (average ~{numbers.price(self.expected_price)}, worst "
                    f"{numbers.price(self.limit_price, tick)}, {self.time_in_force}) spending at "
                    f"most {numbers.money(self.amount)} ({cost}{fee_text}).")
        paid = "for about" if self.side is Side.BUY else "receiving about"
        return (f"{verb} {numbers.shares(self.estimated_shares)} shares of {what} at market "
                f"(average ~{numbers.price(self.expected_price)}, worst "
                f"{numbers.price(self.limit_price, tick)}, {self.time_in_force}) {paid} "
                f"{cost}{fee_text}.")

    def _resting(self) -> str:
        return f"{self.time_in_force}, post-only" if self.post_only else self.time_in_force

    def summary(self) -> dict[str, Any]:
        """The preview's fields (Decimals kept as Decimals)."""
        return {
            "token_id": self.market.token_id,
            "market_slug": self.market.market_slug,
            "market_title": self.market.market_title,
            "outcome": self.market.outcome,
            "side": self.side.lower(),
            "order_type": self.order_type,
            "time_in_force": self.time_in_force,
            "post_only": self.post_only,
            "size": self.size,
            "amount": self.amount,
            "price": self.limit_price,
            "expected_price": self.expected_price,
            "estimated_shares": self.estimated_shares,
            "estimated_cost": self.estimated_cost,
            "fee": self.estimated_fee,
            "midpoint": self.midpoint,
            "best_bid": self.best_bid,
            "best_ask": self.best_ask,
            "slippage_bps": self.slippage_bps,
            "tick_size": self.market.tick_size,
            "min_order_size": self.market.min_order_size,
            "confirmation": self.confirmation(),
        }


@dataclass(frozen=True)
class OrderRequest:
    """A PlaceOrderRequest's fields, checked (``OrderRequest.checked``): what an order is
    planned from, whatever asks for it (a person, a copy, a position sale)."""

    token_id: str
    side: Side
    size: Decimal | None          # shares; None when a market buy is sized by ``amount``
    order_type: str               # market | limit
    price: Decimal | None = None  # a limit order's price
    amount: Decimal | None = None  # pUSD a market buy spends, fee included
    time_in_force: str | None = None
    floor_size: bool = False      # floor the size to the share grid instead of refusing
    post_only: bool = False

    @classmethod
    def checked(cls, token_id: Any, side: Any, size: Any, order_type: Any, price: Any = None,
                amount: Any = None, *, time_in_force: str | None = None,
                floor_size: bool = False, post_only: bool = False) -> OrderRequest:
        """The request from any surface's fields; ValidationFailed (400) if one is bad."""
        token, parsed_side, shares, kind, limit, spend = normalize_request(
            token_id, side, size, order_type, price, amount)
        return cls(token, parsed_side, shares, kind, limit, spend, time_in_force, floor_size,
                   post_only)


def plan_request(request: OrderRequest, book: OrderBook, market: MarketInfo) -> OrderPlan:
    """The order ``request`` asks for, priced on ``book`` under ``market``'s rules: pure (no
    database, no network), so the copy engine plans from what its decision just read."""
    return plan_normalized(request.token_id, request.side, request.size, request.order_type,
                           request.price, time_in_force=request.time_in_force,
                           floor_size=request.floor_size, book=book, market=market,
                           post_only=request.post_only, amount=request.amount)


def read_market(token_id: str, *, fresh: bool = False) -> tuple[OrderBook, MarketInfo]:
    """The token's live book and its market (``fresh``: live parameters read now, not from
    their 10-second cache); NotFound for a token the venue does not know."""
    book = _read_book(token_id)
    return book, market_info(token_id, book, fresh=fresh)


def _read_book(token_id: str) -> OrderBook:
    try:
        return venues.client().clob.book(token_id)
    except VenueNotFound:
        raise errors.NotFound(f"Unknown token {token_id}: the venue has no order book "
                              "for it.") from None


def _plain(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "") else text


def summary_json(summary: dict[str, Any]) -> str:
    """The summary as JSON text, Decimals as exact strings."""
    return json.dumps(summary, default=lambda v: _plain(v) if isinstance(v, Decimal) else str(v))


def _invalid(name: str, message: str) -> errors.ValidationFailed:
    return errors.ValidationFailed(f"Validation failed: {name}: {message}",
                                   fields={name: [message]})


def normalize_request(token_id: Any, side: Any, size: Any, order_type: Any,
                      price: Any = None, amount: Any = None,
                      ) -> tuple[str, Side, Decimal | None, str, Decimal | None, Decimal | None]:
    """Check the fields of a PlaceOrderRequest (any surface); ValidationFailed (400) if bad.

    Answers (token, side, size, order_type, price, amount): exactly one of size and amount
    is set, amount only for a market buy."""
    token = str(token_id or "").strip()
    if not token:
        raise _invalid("token_id", "Required.")
    try:
        parsed_side = Side.parse(side)
    except ValueError:
        raise _invalid("side", "Must be 'buy' or 'sell'.") from None
    kind = str(order_type or "").strip().lower()
    if kind not in ORDER_TYPES:
        raise _invalid("order_type", "Must be 'market' or 'limit'.")
    shares, spend = _size_or_amount(parsed_side, kind, size, amount)
    limit: Decimal | None = None
    if kind == "limit":
        if price is None:
            raise _invalid("price", "Required for limit orders.")
        limit = _decimal("price", price)
        if not Decimal(0) < limit < Decimal(1):
            raise _invalid("price", "Must be between 0 and 1 (exclusive).")
    # A market order's price is ignored: its protective limit comes from the book.
    return token, parsed_side, shares, kind, limit, spend


def _size_or_amount(side: Side, kind: str, size: Any, amount: Any,
                    ) -> tuple[Decimal | None, Decimal | None]:
    """Exactly one of ``size`` (shares) and ``amount`` (pUSD, market buys only), checked."""
    if amount is None:
        if size is None:
            raise _invalid("size", "Required (or give amount, the pUSD a market buy spends).")
        shares = _decimal("size", size)
        if shares <= 0:
            raise _invalid("size", "Must be greater than 0.")
        return shares, None
    if size is not None:
        raise _invalid("amount", "Give size (shares) or amount (pUSD to spend), not both.")
    if kind != "market" or side is not Side.BUY:
        raise _invalid("amount", "Only market buys can be sized by amount; give size in shares.")
    spend = _decimal("amount", amount)
    if spend != spend.quantize(CENT, ROUND_FLOOR):
        raise _invalid("amount", "At most 2 decimal places (whole cents).")
    if spend < MIN_MARKET_BUY:
        raise _invalid("amount", f"Minimum market buy is {_plain(MIN_MARKET_BUY)} pUSD.")
    return None, spend


def _decimal(name: str, value: Any) -> Decimal:
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _invalid(name, 'Must be a decimal string such as "12.5".')
    try:
        result = Decimal(str(value).strip())
    except ArithmeticError:
        raise _invalid(name, 'Must be a decimal string such as "12.5".') from None
    if not result.is_finite():
        raise _invalid(name, 'Must be a decimal string such as "12.5".')
    return result


def market_info(token_id: str, book: OrderBook | None = None, *,
                fresh: bool = False) -> MarketInfo:
    """The token's market (Gamma, cached) with its live parameters (``parameters``; ``fresh``
    reads them now instead of from the 10-second cache) and the live book."""
    client = venues.client()
    try:
        market = client.gamma.market_by_token(token_id)
        if book is None:
            book = client.clob.book(token_id)
    except VenueNotFound:
        raise errors.NotFound(f"Unknown token {token_id}.") from None
    if catalogue.token(token_id) is None:
        catalogue.upsert_markets([market])
    return market_info_from(token_id, market, book,
                            parameters.live(market.condition_id, fresh=fresh))


def market_info_from(token_id: str, market: GammaMarket, book: OrderBook,
                     params: MarketParameters | None) -> MarketInfo:
    """MarketInfo from a Gamma market, a book and the live parameters already at hand (no
    I/O); ``parameters.limits`` decides tick, minimum, neg-risk and fees."""
    try:
        outcome = market.outcome_for(token_id)
    except ValueError:
        outcome = ""
    limits = parameters.limits(params, book, market)
    return MarketInfo(
        token_id=token_id,
        market_slug=market.slug,
        market_title=market.question,
        outcome=outcome,
        condition_id=market.condition_id,
        tick_size=limits.tick_size,
        min_order_size=limits.min_order_size,
        neg_risk=limits.neg_risk,
        fee_schedule=limits.fees,
        accepting_orders=market.accepting_orders,
        closed=market.closed,
        taker_delay=limits.taker_delay,
    )


def _check_size_grid(size: Decimal) -> None:
    if size != size.quantize(CENT, ROUND_FLOOR):
        raise errors.ValidationFailed(
            f"Validation failed: size {_plain(size)} has more than {SIZE_DECIMALS} decimals; "
            "the venue trades shares in steps of 0.01.",
            fields={"size": [f"At most {SIZE_DECIMALS} decimal places."]})


def protective_limit(worst: Decimal, side: Side, tick: Decimal,
                     protection_bps: Decimal = PROTECTION_BPS) -> Decimal:
    """The worst price a market order accepts: past ``worst`` by the protection, on the grid."""
    move = max(tick, worst * protection_bps / BPS)
    if side is Side.BUY:
        price = snap_to_tick(worst + move, tick, ROUND_CEILING)
        return min(price, Decimal(1) - tick)
    price = snap_to_tick(worst - move, tick, ROUND_FLOOR)
    return max(price, tick)


def _crosses(side: Side, best_bid: Decimal | None, best_ask: Decimal | None) -> str:
    """Why a post-only order at this price is refused: it would match at once."""
    other, best = ("ask", best_ask) if side is Side.BUY else ("bid", best_bid)
    return (f"A post-only order must rest on the book, but at this price it would match the "
            f"best {other} ({_plain(best) if best is not None else 'none'}) at once. "
            f"Choose a price that does not cross, or drop post_only.")


def plan_order(token_id: str, side: Side | str, size: Decimal | str | None, order_type: str,
               price: Decimal | None = None, *, time_in_force: str | None = None,
               floor_size: bool = False, book: OrderBook | None = None,
               market: MarketInfo | None = None, post_only: bool = False,
               fresh: bool = False, amount: Decimal | str | None = None) -> OrderPlan:
    """Price the order against the live book and check it against the market's rules.

    ``floor_size`` floors the size to the share grid instead of refusing extra decimals
    (used when selling a whole position, whose size comes from fills, not from a person).
    ``book`` and ``market`` let a caller that just read them (the copy engine's decision)
    plan without reading them again.
    """
    token_id, side, shares, order_type, price, spend = normalize_request(
        token_id, side, size, order_type, price, amount)
    return plan_normalized(token_id, side, shares, order_type, price, time_in_force=time_in_force,
                           floor_size=floor_size, book=book, market=market,
                           post_only=post_only, fresh=fresh, amount=spend)


def plan_normalized(token_id: str, side: Side | str, size: Decimal | None, order_type: str,
                    price: Decimal | None = None, *, time_in_force: str | None = None,
                    floor_size: bool = False, book: OrderBook | None = None,
                    market: MarketInfo | None = None, post_only: bool = False,
                    fresh: bool = False, amount: Decimal | None = None) -> OrderPlan:
    """``plan_order`` of a request that ``normalize_request`` already returned (not again).

    ``fresh``: read the market's live parameters now, not from their 10-second cache (an
    order after its preview: planned again under whatever the market requires now).
    """
    side = Side.parse(side)  # a Side already (the usual case) costs nothing
    if post_only and order_type != "limit":
        raise _invalid("post_only", "Only limit orders can be post-only.")
    if book is None:
        book = _read_book(token_id)
    if market is None:
        market = market_info(token_id, book, fresh=fresh)
    if market.closed or not market.accepting_orders:
        raise errors.BadRequest(f"The market \"{market.market_title}\" is not accepting "
                                "orders (closed or paused).")
    if amount is not None:
        return _plan_spend(market, side, amount, book, time_in_force)
    assert size is not None
    if floor_size:
        size = size.quantize(CENT, ROUND_FLOOR)
        if size <= 0:
            raise _invalid("size", "Below the venue's 0.01-share granularity.")
    _check_size_grid(size)
    tick = market.tick_size
    best_bid, best_ask, midpoint = book.top_of_book()
    common = {"market": market, "side": side, "order_type": order_type, "size": size,
              "best_bid": best_bid, "best_ask": best_ask, "midpoint": midpoint, "book": book}
    if order_type == "limit":
        assert price is not None
        if price % tick != 0 or not tick <= price <= Decimal(1) - tick:
            raise errors.ValidationFailed(
                f"Validation failed: price {_plain(price)} is not on this market's tick grid "
                f"(tick size {_plain(tick)}, between {_plain(tick)} and "
                f"{_plain(Decimal(1) - tick)}).",
                fields={"price": [f"Must be a multiple of the tick size {_plain(tick)}."]})
        if size < market.min_order_size:
            raise errors.ValidationFailed(
                f"Validation failed: size {_plain(size)} is below this market's minimum order "
                f"size of {_plain(market.min_order_size)} shares.",
                fields={"size": [f"Minimum is {_plain(market.min_order_size)} shares."]})
        crossing = order_book.walk(book, side, shares=size, limit=price)
        if post_only and crossing.fills:
            raise _invalid("post_only", _crosses(side, best_bid, best_ask))
        return OrderPlan(limit_price=price, time_in_force="GTC", budget=None, walk=crossing,
                         post_only=post_only, **common)
    tif = _market_tif(time_in_force)
    needed = order_book.walk(book, side, shares=size)
    if not needed.fills:
        other = "asks" if side is Side.BUY else "bids"
        raise errors.BadRequest(f"The book has no {other} for this token; a market "
                                f"{side.lower()} cannot fill. Use a limit order.")
    if tif == "FOK" and not needed.complete:
        raise errors.BadRequest(
            f"The book holds only {_plain(needed.shares)} shares on the "
            f"{'ask' if side is Side.BUY else 'bid'} side; a market order for "
            f"{_plain(size)} cannot fill completely. Reduce the size or use a limit order.")
    worst = needed.worst_price
    assert worst is not None
    limit = protective_limit(worst, side, tick)
    if side is Side.BUY:
        budget = needed.value.quantize(CENT, ROUND_FLOOR)
        if budget < MIN_MARKET_BUY:
            raise errors.ValidationFailed(
                f"Validation failed: a market buy must spend at least {_plain(MIN_MARKET_BUY)} "
                f"pUSD; {_plain(size)} shares cost about {_plain(needed.value)}.",
                fields={"size": [f"Minimum market buy is {_plain(MIN_MARKET_BUY)} pUSD."]})
        expected = order_book.walk(book, side, budget=budget, limit=limit)
        return OrderPlan(limit_price=limit, time_in_force=tif, budget=budget, walk=expected,
                         **common)
    expected = order_book.walk(book, side, shares=size, limit=limit)
    return OrderPlan(limit_price=limit, time_in_force=tif, budget=None, walk=expected, **common)


def _market_tif(time_in_force: str | None) -> str:
    tif = (time_in_force or "FOK").upper()
    if tif not in TIME_IN_FORCE:
        raise _invalid("time_in_force", "Market orders are FOK or FAK.")
    return tif


def _plan_spend(market: MarketInfo, side: Side, amount: Decimal, book: OrderBook,
                time_in_force: str | None) -> OrderPlan:
    """A market BUY spending at most ``amount`` pUSD, its expected taker fee included."""
    tif = _market_tif(time_in_force)
    reach = order_book.walk(book, side, budget=amount)
    if not reach.fills:
        raise errors.BadRequest("The book has no asks for this token; a market buy cannot "
                                "fill. Use a limit order.")
    if tif == "FOK" and not reach.complete:
        raise errors.BadRequest(
            f"The book holds only {numbers.money(reach.value)} of asks; a market buy of "
            f"{numbers.money(amount)} cannot fill completely. Spend less or use a limit order.")
    worst = reach.worst_price
    assert worst is not None
    limit = protective_limit(worst, side, market.tick_size)
    budget = amount
    expected = order_book.walk(book, side, budget=budget, limit=limit)
    # The fee is charged on top of the budget: take it out until budget + fee fit the amount
    # (each round lowers the budget by at least a cent, and the fee with it).
    while (over := budget + expected.fee(market.fee_schedule) - amount) > 0:
        budget = (budget - over).quantize(CENT, ROUND_FLOOR)
        if budget < MIN_MARKET_BUY:
            raise _invalid("amount", f"After the taker fee less than "
                           f"{_plain(MIN_MARKET_BUY)} pUSD is left to buy with.")
        expected = order_book.walk(book, side, budget=budget, limit=limit)
    best_bid, best_ask, midpoint = book.top_of_book()
    return OrderPlan(market=market, side=side, order_type="market",
                     size=expected.shares.quantize(CENT, ROUND_FLOOR), limit_price=limit,
                     time_in_force=tif, budget=budget, walk=expected, best_bid=best_bid,
                     best_ask=best_ask, midpoint=midpoint, book=book, amount=amount)
