"""A position held at average cost, and what a fill does to it: pure arithmetic.

The copy rules (``services.copying.mirror``), the per-config position ledger
(``copy_positions``) and the PnL history all book fills with this one rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from venue.models import Side

BUY = Side.BUY


@dataclass(frozen=True)
class Holding:
    """A config's position in one token."""

    shares: Decimal = Decimal(0)
    cost_usdc: Decimal = Decimal(0)

    @property
    def average_price(self) -> Decimal | None:
        """Cost per share, None when flat."""
        return self.cost_usdc / self.shares if self.shares > 0 else None


def apply_fill(holding: Holding, side: Side | str, shares: Decimal, usdc: Decimal
               ) -> tuple[Holding, Decimal]:
    """The holding after a fill, and the realized PnL of a sell (average-cost method)."""
    if side == BUY:
        return Holding(holding.shares + shares, holding.cost_usdc + usdc), Decimal(0)
    sold = min(shares, holding.shares)
    if sold <= 0:
        return holding, Decimal(0)
    cost_out = holding.cost_usdc * sold / holding.shares
    remaining = holding.shares - sold
    left = Holding(remaining, holding.cost_usdc - cost_out if remaining > 0 else Decimal(0))
    return left, usdc - cost_out
