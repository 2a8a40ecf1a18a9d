"""Resolution and redemption: a market closes with a winner, holders redeem for pUSD.

Not locked here: the sandbox state's lock guards every call.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal

from eth_utils import to_checksum_address

from devstack.venue.amounts import units
from devstack.venue.catalog import Catalog, Market
from devstack.venue.desk import OrderDesk, random_hash
from devstack.venue.ledger import Ledger
from devstack.venue.rejections import VenueRejection
from devstack.venue.tape import Redemption, Tape


class Settlement:
    """Closes markets with an outcome and pays their winning tokens out."""

    def __init__(self, now: Callable[[], float], catalog: Catalog, desk: OrderDesk,
                 ledger: Ledger, tape: Tape) -> None:
        self.now = now
        self.catalog = catalog
        self.desk = desk
        self.ledger = ledger
        self.tape = tape

    def resolve(self, condition_id: str, winner: int) -> Market:
        """Close a market with outcome `winner` winning; cancels its open orders."""
        market = self.catalog.market(condition_id)
        if winner not in (0, 1):
            raise VenueRejection("winning outcome index must be 0 or 1")
        market.winner = winner
        market.closed = True
        market.active = True
        market.closed_time = datetime.fromtimestamp(self.now(), UTC).strftime(
            "%Y-%m-%d %H:%M:%S+00"
        )
        self.desk.close_market(market)
        self.desk.publish(market)
        return market

    def redeem(self, address: str, condition_id: str) -> Decimal:
        """Pay out a resolved market's winning tokens to `address`; returns pUSD paid."""
        market = self.catalog.market(condition_id)
        if market.winner is None:
            raise VenueRejection("market is not resolved")
        now = int(self.now())
        tx = random_hash()
        payouts = self.ledger.pay_out(address, market)
        for payout in payouts:
            self.tape.record_redemption(Redemption(
                proxy_wallet=to_checksum_address(address), condition_id=market.condition_id,
                asset=payout.token_id, size=payout.shares, usdc=payout.usdc, timestamp=now,
                transaction_hash=tx, outcome=market.outcomes[payout.index],
                outcome_index=payout.index, seq=self.tape.next_seq(),
            ))
        return units(sum(p.usdc for p in payouts))
