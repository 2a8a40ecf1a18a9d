"""Order books and price-time-priority matching for binary markets.

Both outcome tokens of a market share one book kept in outcome-0 terms: a BUY
of outcome 1 at p is an ask at 1-p, a SELL of outcome 1 at p a bid at 1-p. So
a Yes buyer can match a No buyer (mint), a Yes seller a No seller (merge), or
the usual buyer/seller of the same token, as on the venue. Sizes are integer
base units (6 decimals); prices are Decimals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, Decimal

ONE = Decimal(1)


@dataclass
class BookOrder:
    """An order known to the engine: resting, incoming, or finished."""

    order_id: str
    condition_id: str
    token_id: str
    token_index: int
    side: str  # "BUY" or "SELL"
    price: Decimal  # limit price in the order's own token
    original_size: int  # shares (base units); 0 for budget orders until filled
    maker: str
    signer: str = ""
    owner: str = ""  # API key of the placing account ("" for sandbox-internal orders)
    order_type: str = "GTC"
    expiration: int = 0
    created_at: int = 0
    seq: int = 0
    budget: int | None = None  # pUSD base units a market BUY may spend
    spent: int = 0
    size_matched: int = 0
    status: str = "LIVE"
    outcome: str = ""
    is_house: bool = False
    metadata: str = ""  # the signed order's bytes32 metadata and builder code, hex
    builder: str = ""
    associate_trades: list[str] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        """Shares still open (share-sized orders)."""
        return self.original_size - self.size_matched

    @property
    def is_bid(self) -> bool:
        """True when the order buys outcome 0 in book terms."""
        return (self.token_index == 0) == (self.side == "BUY")

    @property
    def book_price(self) -> Decimal:
        """The order's limit price in outcome-0 terms."""
        return self.price if self.token_index == 0 else ONE - self.price

    def own_price(self, book_price: Decimal) -> Decimal:
        """Convert an outcome-0 price to this order's token."""
        return book_price if self.token_index == 0 else ONE - book_price

    def expired(self, now: float) -> bool:
        """GTD orders die at their expiration (seconds)."""
        return self.order_type == "GTD" and 0 < self.expiration <= now


@dataclass
class PlannedFill:
    """One match between an incoming order and a resting one."""

    resting: BookOrder
    shares: int
    book_price: Decimal


@dataclass
class MatchPlan:
    """The fills an incoming order would get, and whether it is then complete."""

    fills: list[PlannedFill]
    complete: bool


class MarketBook:
    """The bids and asks of one market, best first."""

    def __init__(self, condition_id: str) -> None:
        self.condition_id = condition_id
        self.bids: list[BookOrder] = []  # book price desc, then time
        self.asks: list[BookOrder] = []  # book price asc, then time

    def add(self, order: BookOrder) -> None:
        """Rest an order at the back of its price level."""
        side = self.bids if order.is_bid else self.asks
        price = order.book_price
        index = len(side)
        for i, other in enumerate(side):
            better = other.book_price < price if order.is_bid else other.book_price > price
            if better:
                index = i
                break
        side.insert(index, order)

    def remove(self, order: BookOrder) -> None:
        """Take an order off the book if it rests there."""
        side = self.bids if order.is_bid else self.asks
        for i, other in enumerate(side):
            if other is order:
                del side[i]
                return

    def orders(self) -> list[BookOrder]:
        """All resting orders."""
        return [*self.bids, *self.asks]

    def drop_expired(self, now: float) -> list[BookOrder]:
        """Remove GTD orders past expiration; return them."""
        gone = [o for o in self.orders() if o.expired(now)]
        for order in gone:
            self.remove(order)
        return gone

    def best_bid(self) -> Decimal | None:
        """Best outcome-0 bid."""
        return self.bids[0].book_price if self.bids else None

    def best_ask(self) -> Decimal | None:
        """Best outcome-0 ask."""
        return self.asks[0].book_price if self.asks else None

    def plan(self, incoming: BookOrder, now: float) -> MatchPlan:
        """Walk the opposite side and list the fills, without changing anything."""
        opposite = self.asks if incoming.is_bid else self.bids
        limit = incoming.book_price
        fills: list[PlannedFill] = []
        shares_left = incoming.remaining
        budget_left = incoming.budget - incoming.spent if incoming.budget is not None else None
        for resting in opposite:
            if resting.expired(now) or resting.remaining <= 0:
                continue
            price = resting.book_price
            crosses = price <= limit if incoming.is_bid else price >= limit
            if not crosses:
                break
            if budget_left is not None:
                own = incoming.own_price(price)
                affordable = int((Decimal(budget_left) / own).to_integral_value(ROUND_FLOOR))
                shares = min(affordable, resting.remaining)
                if shares <= 0:
                    return MatchPlan(fills, True)
                budget_left -= cost_of(shares, own)
            else:
                shares = min(shares_left, resting.remaining)
                shares_left -= shares
            fills.append(PlannedFill(resting, shares, price))
            if budget_left is None and shares_left == 0:
                return MatchPlan(fills, True)
        if budget_left is not None:
            return MatchPlan(fills, budget_left == 0)
        return MatchPlan(fills, shares_left == 0)


def cost_of(shares: int, price: Decimal) -> int:
    """pUSD base units a buyer pays for `shares` base units at `price` (rounded up)."""
    return int((Decimal(shares) * price).to_integral_value(rounding="ROUND_CEILING"))


def proceeds_of(shares: int, price: Decimal) -> int:
    """pUSD base units a seller receives for `shares` base units at `price` (rounded down)."""
    return int((Decimal(shares) * price).to_integral_value(ROUND_FLOOR))
