"""The house: the sandbox's market maker, quoting a ladder around each market's fair price.

Not locked here: the sandbox state's lock guards every call.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from devstack.venue.amounts import SCALE, on_tick_grid
from devstack.venue.catalog import Market

if TYPE_CHECKING:
    from devstack.venue.desk import OrderDesk


class HouseMaker:
    """Keeps the house's resting BUY orders on both outcomes of every liquid market."""

    def __init__(self, address: str, desk: OrderDesk) -> None:
        self.address = address
        self.desk = desk

    def ladder(self, market: Market) -> list[tuple[int, Decimal, int]]:
        """(token index, own price, shares) of the house's quotes around the fair price."""
        spacing = max(market.tick_size, Decimal("0.01"))
        ladder = []
        for level in range(1, 6):
            shares = 250 * level * SCALE
            bid = market.fair_price - spacing * level
            ask = market.fair_price + spacing * level
            if bid >= market.tick_size:
                ladder.append((0, bid, shares))  # house BUYs outcome 0 at bid
            if ask <= 1 - market.tick_size:
                ladder.append((1, 1 - ask, shares))  # house BUYs outcome 1: an outcome-0 ask
        return ladder

    def replenish(self, market: Market) -> None:
        """Top up every rung of the ladder that has lost half its size or more."""
        if market.closed or not market.house_liquidity:
            return
        book = self.desk.books[market.condition_id]
        resting: dict[tuple[int, Decimal], int] = {}
        for order in book.orders():
            if order.is_house:
                key = (order.token_index, order.price)
                resting[key] = resting.get(key, 0) + order.remaining
        for index, price, shares in self.ladder(market):
            have = resting.get((index, price), 0)
            if have * 2 < shares:
                self.desk.rest(market, self.address, index, "BUY", price, shares - have,
                               is_house=True)

    def recenter(self, market: Market, fair_price: Decimal) -> None:
        """Move the house quotes of a market to a new fair price (the caller publishes)."""
        spacing = max(market.tick_size, Decimal("0.01"))
        low, high = spacing * 6, 1 - spacing * 6
        market.fair_price = on_tick_grid(min(max(fair_price, low), high), market.tick_size)
        book = self.desk.books[market.condition_id]
        for order in [o for o in book.orders() if o.is_house]:
            self.desk.close(order, "CANCELED")
        self.replenish(market)
