"""The sandbox's money: pUSD balances, outcome-token positions, cost basis, reservations.

Not locked here: the sandbox state's lock guards every call.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from devstack.venue.amounts import to_base, units
from devstack.venue.catalog import Market
from devstack.venue.matching import BookOrder, cost_of, proceeds_of


@dataclass
class PositionStats:
    """Cost basis of one address in one token."""

    bought: int = 0  # shares bought in total
    cost: int = 0  # pUSD cost of the shares still held
    gross_cost: int = 0  # pUSD paid for every share bought
    fees: int = 0
    realized: int = 0  # pUSD realized on sells and redemptions


@dataclass(frozen=True)
class Payout:
    """One token of a resolved market paid out to its holder."""

    index: int
    token_id: str
    shares: int
    usdc: int


class Ledger:
    """Balances and positions by lower-case address, and the open orders that lock them."""

    def __init__(self) -> None:
        self.collateral: dict[str, int] = {}
        self.positions: dict[str, dict[str, int]] = {}
        self.stats: dict[tuple[str, str], PositionStats] = {}
        # maker -> order id -> open order: what each address's resting orders lock
        self.open_orders: dict[str, dict[str, BookOrder]] = {}
        # with a chain attached: outcome tokens the venue itself moved on chain (settlement,
        # provisioning) per (address, token); the ledger counts them already, so only the
        # rest of an on-chain balance came from outside the venue
        self.onchain: dict[tuple[str, str], int] = {}

    # -- balances --

    def balance(self, address: str) -> int:
        """pUSD base units held by an address."""
        return self.collateral.get(address.lower(), 0)

    def token_balance(self, address: str, token_id: str) -> int:
        """Outcome-token base units held by an address."""
        return self.positions.get(address.lower(), {}).get(token_id, 0)

    def credit(self, address: str, base: int) -> int:
        """Add pUSD base units to an address; returns the new balance."""
        key = address.lower()
        self.collateral[key] = self.collateral.get(key, 0) + base
        return self.collateral[key]

    def set_balance(self, address: str, base: int) -> None:
        """Set an address's pUSD to exactly ``base`` units."""
        self.collateral[address.lower()] = base

    def grant(self, address: str, token_id: str, base: int) -> int:
        """Credit outcome tokens to an address; returns the new size."""
        held = self.positions.setdefault(address.lower(), {})
        held[token_id] = held.get(token_id, 0) + base
        return held[token_id]

    def set_position(self, address: str, token_id: str, base: int) -> None:
        """Set an address's holding of a token to exactly ``base`` units."""
        self.positions.setdefault(address.lower(), {})[token_id] = base

    # -- reservations --

    def hold(self, order: BookOrder) -> None:
        """An order now rests: what it may still trade is locked."""
        self.open_orders.setdefault(order.maker.lower(), {})[order.order_id] = order

    def release(self, order: BookOrder) -> None:
        """An order left the book: it locks nothing any more."""
        self.open_orders.get(order.maker.lower(), {}).pop(order.order_id, None)

    def reserved(self, address: str) -> tuple[int, dict[str, int]]:
        """pUSD and tokens locked by an address's open orders."""
        collateral = 0
        tokens: dict[str, int] = {}
        for order in self.open_orders.get(address.lower(), {}).values():
            if order.side == "BUY":
                collateral += cost_of(order.remaining, order.price)
            else:
                tokens[order.token_id] = tokens.get(order.token_id, 0) + order.remaining
        return collateral, tokens

    # -- trades and payouts --

    def settle(
        self, market: Market, order: BookOrder, shares: int, price: Decimal, is_taker: bool
    ) -> tuple[int, int]:
        """Move one participant's pUSD and tokens for a fill; returns (pUSD amount, fee)."""
        key = order.maker.lower()
        held = self.positions.setdefault(key, {})
        stats = self.stats.setdefault((key, order.token_id), PositionStats())
        if order.side == "BUY":
            usdc = cost_of(shares, price)
            self.collateral[key] = self.collateral.get(key, 0) - usdc
            held[order.token_id] = held.get(order.token_id, 0) + shares
            stats.bought += shares
            stats.cost += usdc
            stats.gross_cost += usdc
        else:
            usdc = proceeds_of(shares, price)
            before = held.get(order.token_id, 0)
            basis = stats.cost * shares // before if before else 0
            stats.cost -= basis
            stats.realized += usdc - basis
            held[order.token_id] = before - shares
            self.collateral[key] = self.collateral.get(key, 0) + usdc
        fee = 0
        if is_taker and market.fees is not None and not order.is_house:
            fee = to_base(market.fees.taker_fee(units(shares), price))
            fee = max(0, min(fee, self.collateral.get(key, 0)))
            self.collateral[key] = self.collateral.get(key, 0) - fee
            stats.fees += fee
        return usdc, fee

    def pay_out(self, address: str, market: Market) -> list[Payout]:
        """Turn an address's tokens of a resolved market into pUSD; what each token paid."""
        key = address.lower()
        held = self.positions.get(key, {})
        paid: list[Payout] = []
        for index, token in enumerate(market.token_ids):
            shares = held.get(token, 0)
            if shares <= 0:
                continue
            payout = shares if index == market.winner else 0
            stats = self.stats.setdefault((key, token), PositionStats())
            stats.realized += payout - stats.cost
            stats.cost = 0
            held[token] = 0
            paid.append(Payout(index, token, shares, payout))
        self.collateral[key] = self.collateral.get(key, 0) + sum(p.usdc for p in paid)
        return paid

    def moved_on_chain(self, address: str, token_id: str, amount: int) -> None:
        """The venue moved ``amount`` (signed) of ``token_id`` to ``address`` on chain."""
        key = (address.lower(), token_id)
        self.onchain[key] = self.onchain.get(key, 0) + amount

    def from_outside(self, address: str, token_id: str, on_chain: int) -> int:
        """The part of an on-chain token balance the venue did not move there itself."""
        return on_chain - self.onchain.get((address.lower(), token_id), 0)

    def held(self, address: str) -> list[tuple[str, int, PositionStats]]:
        """(token, shares, stats) of every token an address holds or held."""
        key = address.lower()
        return [(token, shares, self.stats.get((key, token), PositionStats()))
                for token, shares in self.positions.get(key, {}).items()]
