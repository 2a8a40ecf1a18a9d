"""Live positions: what the user's wallet holds, valued from the live book, and selling them.

Where positions come from (README "Positions"):

* **Size** is the venue's: the Data API ``/v2/positions`` of the maker address (the EOA for
  signature type 0, the deposit wallet for type 3). It sees every fill, redemption and
  transfer, including ones that never passed through us.
* **Cost basis and realized PnL** come from our fills ledger (services/trading/trades.py,
  average-cost method, fees included). When the ledger and the venue disagree on size
  (say a redemption or an outside transfer), the ledger's basis is scaled to the venue's
  size; tokens the ledger never saw take the venue's own average price.
* **Current price** is the live book's mark (midpoint, else the side that exists), and
  the settlement price once the market has resolved.
* **claimable_value** is set once resolved: from services/claims (on-chain balances and
  payouts) when a chain is configured and holds the tokens, else the venue's settlement
  value (size x settlement price), which is what the sandbox venue pays on redemption;
  0 for a position the venue calls REDEEMABLE_LOST (never offered for a claim).
* **status** is the Data API v2's (ACCOUNTS.md §12: OPEN, REDEEMABLE, REDEEMABLE_LOST,
  MERGEABLE, CLOSED), kept as text whatever it says; **merge_value** is what merging a
  MERGEABLE position's complete sets returns (1 pUSD a set held).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID

from chain.errors import ChainError
from models.trading import ORDER_REJECTED, Trade
from models.user import User
from services.markets import catalogue, order_book
from services.platform import chain_access, errors, venues
from services.platform.principal import user_id_of
from services.trading import orders, trades
from services.wallets.venue_accounts import maker_address
from venue.errors import VenueError, VenueNotFound
from venue.models import CLOSED, MERGEABLE, REDEEMABLE, REDEEMABLE_LOST
from venue.models import Position as VenuePosition

log = logging.getLogger(__name__)
ZERO = Decimal(0)
RESOLVED = (REDEEMABLE, REDEEMABLE_LOST)  # the venue's statuses of a resolved market


@dataclass
class LedgerEntry:
    """One token's holding as our fills ledger computes it."""

    size: Decimal = ZERO
    cost_basis: Decimal = ZERO
    realized_pnl: Decimal = ZERO
    fees_paid: Decimal = ZERO
    market_slug: str = ""

    def apply(self, side: str, shares: Decimal, value: Decimal, fee: Decimal) -> None:
        """Average-cost accounting: buys add cost (fees included), sells realize against it."""
        if shares <= 0:
            return
        self.fees_paid += fee
        if side == "buy":
            self.size += shares
            self.cost_basis += value + fee
            return
        sold = min(shares, self.size)
        basis = self.cost_basis * sold / self.size if self.size else ZERO
        self.cost_basis -= basis
        self.size -= sold
        self.realized_pnl += value - fee - basis


def ledger(user: User | UUID | str) -> dict[str, LedgerEntry]:
    """Per token, the user's holding according to our own fills."""
    entries: dict[str, LedgerEntry] = {}
    rows = (Trade.select().where(Trade.user == user_id_of(user))
            .order_by(Trade.created_at, Trade.id))
    for trade in rows:
        entry = entries.setdefault(trade.token_id, LedgerEntry(market_slug=trade.market_slug))
        entry.apply(trade.side, trade.filled_size, trade.filled_value, trade.fee)
    return entries


def venue_positions(address: str) -> dict[str, VenuePosition]:
    """The venue's view of an address's holdings, by token, each with its status."""
    return {row.asset: row for row in venues.client().all_positions(address)}


def merge_value(row: VenuePosition, remote: dict[str, VenuePosition]) -> Decimal | None:
    """What merging a MERGEABLE position's complete sets returns: 1 pUSD a set, so the
    smaller of the two outcomes' sizes held (None for any other status)."""
    if row.status != MERGEABLE:
        return None
    opposite = remote.get(row.opposite_asset)
    return min(row.size, opposite.size) if opposite is not None else ZERO


def _quantized(value: Decimal | None) -> Decimal | None:
    return None if value is None else value.quantize(order_book.BASE_UNIT)


def _mark(token_id: str) -> Decimal | None:
    try:
        return order_book.mark_price(venues.client().clob.book(token_id))
    except VenueNotFound:
        return None


def _claimable(owner: str, token_id: str, size: Decimal, price: Decimal,
               status: str) -> Decimal:
    if status == REDEEMABLE_LOST:  # a lost outcome is never offered for a claim (§12)
        return ZERO
    if chain_access.current().rpc_url:
        from services.wallets import claims

        try:
            value = claims.claimable_value(owner, token_id)
        except (errors.CopytradeError, ChainError) as exc:  # the chain is optional here
            log.warning("claimable value of %s from chain failed: %s", token_id, exc)
            value = None
        if value is not None:
            return value
    return size * price


def _labels(token_id: str, remote: VenuePosition | None, entry: LedgerEntry | None
            ) -> tuple[str, str, str]:
    if remote is not None:
        return remote.slug, remote.title, remote.outcome
    row = catalogue.token(token_id)
    if row is not None:
        return row.market.slug, row.market.title, row.outcome
    return (entry.market_slug if entry else ""), "", ""


def list_positions(user: User | UUID | str, active_only: bool = True) -> list[dict[str, Any]]:
    """Every Position field of SPEC for the user's holdings (only size > 0 when active_only)."""
    user_id = user_id_of(user)
    trades.refresh(user_id)
    owner = maker_address(user_id)
    held = ledger(user_id)
    remote = venue_positions(owner)
    result = []
    for token_id in sorted(set(held) | set(remote)):
        entry, row = held.get(token_id), remote.get(token_id)
        size = row.size if row is not None else ZERO
        if active_only and size <= 0:
            continue
        if entry is not None and entry.size > 0:
            cost = entry.cost_basis if entry.size == size else entry.cost_basis * size / entry.size
        elif row is not None:
            cost = row.initial_value if row.initial_value is not None else row.avg_price * size
        else:
            cost = ZERO
        status = row.status if row is not None else CLOSED
        resolved = bool(row is not None and (row.redeemable or status in RESOLVED))
        price = row.cur_price if resolved and row is not None else _mark(token_id)
        if price is None:
            price = row.cur_price if row is not None else ZERO
        slug, title, outcome = _labels(token_id, row, entry)
        value = size * price
        result.append({
            "token_id": token_id, "market_slug": slug, "market_title": title,
            "outcome": outcome, "size": size, "cost_basis": cost.quantize(order_book.BASE_UNIT),
            "current_price": price, "current_value": value.quantize(order_book.BASE_UNIT),
            "unrealized_pnl": (value - cost).quantize(order_book.BASE_UNIT),
            "realized_pnl": (entry.realized_pnl if entry else ZERO).quantize(
                order_book.BASE_UNIT),
            "resolved": resolved,
            "status": status,
            "claimable_value": _quantized(_claimable(owner, token_id, size, price, status)
                                          if resolved else None),
            "merge_value": None if row is None else _quantized(merge_value(row, remote)),
        })
    return result


def ledger_drift(user: User | UUID | str) -> dict[str, tuple[Decimal, Decimal]]:
    """Tokens whose ledger size differs from the venue's: token -> (ledger, venue)."""
    user_id = user_id_of(user)
    held = ledger(user_id)
    remote = venue_positions(maker_address(user_id))
    drift = {}
    for token_id in set(held) | set(remote):
        mine = held[token_id].size if token_id in held else ZERO
        theirs = remote[token_id].size if token_id in remote else ZERO
        if mine != theirs:
            drift[token_id] = (mine, theirs)
    return drift


def sell_positions(user: User | UUID | str, token_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Sell the whole holding of each token at market (FAK); one result per token, its status
    as stored (``orders.placed_view``; the surface's schema words it)."""
    if not token_ids:
        raise errors.ValidationFailed(fields={"token_ids": ["Give at least one token id."]})
    user_id = user_id_of(user)
    remote = venue_positions(maker_address(user_id))
    results = []
    for token_id in dict.fromkeys(str(t) for t in token_ids):
        row = remote.get(token_id)
        size = row.size if row is not None else ZERO
        if size <= 0:
            results.append({"token_id": token_id, "order_id": None, "status": ORDER_REJECTED,
                            "filled_size": ZERO, "average_price": ZERO,
                            "reason": "No position in this token."})
            continue
        try:
            order = orders.place_order(user_id, token_id=token_id, side="sell", size=size,
                                       order_type="market", source="sell",
                                       time_in_force="FAK", floor_size=True)
        except (errors.BadRequest, errors.NotFound, VenueError) as exc:
            results.append({"token_id": token_id, "order_id": None, "status": ORDER_REJECTED,
                            "filled_size": ZERO, "average_price": ZERO, "reason": str(exc)})
            continue
        results.append({"token_id": token_id, **orders.placed_view(order)})
    return results
