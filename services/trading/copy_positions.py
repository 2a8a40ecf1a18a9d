"""A config's copy positions: fills added at average cost, many in few statements.

Positions are per (config, paper, token). The copy engine settles a fill's copies in one
transaction (``apply_positions``: the positions read and locked in one statement,
missing ones inserted, the rest written in one statement); a reconciled
intent adds its fill with ``apply_position``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID, uuid4

from models.base import atomic, utcnow
from models.bulk import insert_rows, select_rows, update_rows
from models.copying import CopyIntent, CopyPosition
from services.trading.holdings import Holding, apply_fill
from venue.models import Side

ZERO = Decimal(0)


@dataclass(frozen=True)
class PositionFill:
    """A fill to add to a config's position (``apply_positions``)."""

    config_id: UUID
    paper: bool
    token_id: str
    side: Side | str
    shares: Decimal
    usdc: Decimal
    condition_id: str = ""
    market_slug: str = ""
    outcome: str = ""
    intent_id: UUID | None = None  # a sale's intent keeps the cost basis it took out


def fee_inclusive(side: Side | str, value: Decimal, fee: Decimal | None) -> Decimal:
    """What a fill moved in pUSD with its taker fee: a buy cost value + fee, a sell brought
    value - fee. Positions count it so, and a config's cap is spent fee included."""
    fee = fee or ZERO
    return value + fee if Side.parse(side) is Side.BUY else value - fee


def true_up_fee(config_id: UUID, token_id: str, side: Side | str, delta: Decimal) -> None:
    """Book ``delta`` more fee on a live fill the position already counted: a buy's cost
    grows by it, a sell's realized PnL shrinks by it (the fee read from the venue's trades
    differs from the estimate counted at settlement)."""
    with atomic():
        [row] = select_rows(CopyPosition, ("id", "cost_usdc", "realized_pnl"),
                            {"config": [config_id], "paper": [False], "token_id": [token_id]},
                            for_update=True) or [None]
        if row is None:
            return
        if Side.parse(side) is Side.BUY:
            changes = {"cost_usdc": Decimal(row["cost_usdc"]) + delta}
        else:
            changes = {"realized_pnl": Decimal(row["realized_pnl"]) - delta}
        update_rows(CopyPosition, [(row["id"], {**changes, "updated_at": utcnow()})])


_POSITION_MOVES = ("shares", "cost_usdc", "realized_pnl", "opened", "entries")  # a fill's
_POSITION_STATE = ("id", "config", "paper", "token_id", *_POSITION_MOVES)


def apply_position(config_id: UUID, paper: bool, token_id: str, side: Side | str, shares: Decimal,
                   usdc: Decimal, *, condition_id: str = "", market_slug: str = "",
                   outcome: str = "", intent_id: UUID | None = None) -> tuple[Holding, int]:
    """Add a fill to the config's position (average cost); the new holding and open count."""
    [result] = apply_positions([PositionFill(
        config_id, paper, token_id, side, shares, usdc, condition_id=condition_id,
        market_slug=market_slug, outcome=outcome, intent_id=intent_id)])
    return result


def apply_positions(fills: Sequence[PositionFill]) -> list[tuple[Holding, int]]:
    """Add fills, in order, to their configs' positions; each fill's new holding and open count.

    The positions involved are read (and locked, on PostgreSQL) in one statement, missing
    ones inserted with their first fill applied, the rest written in one statement
    (``update_rows``): a fill's copies settle in three statements instead of two or three
    each.
    """
    if not fills:
        return []
    with atomic():
        config_ids = list({fill.config_id for fill in fills})
        where: dict[str, list[Any]] = {"paper": list({fill.paper for fill in fills}),
                                       "token_id": list({fill.token_id for fill in fills})}
        positions: dict[tuple[UUID, bool, str], dict[str, Any]] = {}
        for start in range(0, len(config_ids), 500):
            for row in select_rows(CopyPosition, _POSITION_STATE,
                                   {"config": config_ids[start:start + 500], **where},
                                   for_update=True):
                positions[(row["config"], row["paper"], row["token_id"])] = row
        new: set[tuple[UUID, bool, str]] = set()
        moved: set[tuple[UUID, bool, str]] = set()
        results: list[tuple[Holding, int]] = []
        sales: list[tuple[UUID, dict[str, Any]]] = []
        for fill in fills:
            key = (fill.config_id, fill.paper, fill.token_id)
            row = positions.get(key)
            if row is None:
                row = positions[key] = {
                    "id": uuid4(), "config": fill.config_id, "paper": fill.paper,
                    "token_id": fill.token_id, "condition_id": fill.condition_id,
                    "market_slug": fill.market_slug, "outcome": fill.outcome,
                    "shares": ZERO, "cost_usdc": ZERO, "realized_pnl": ZERO, "opened": 0,
                    "entries": 0}
                new.add(key)
            before = Holding(row["shares"], row["cost_usdc"])
            after, realized = apply_fill(before, fill.side, fill.shares, fill.usdc)
            row.update(shares=after.shares, cost_usdc=after.cost_usdc,
                       realized_pnl=row["realized_pnl"] + realized,
                       opened=row["opened"] + (1 if before.shares <= 0 < after.shares else 0),
                       entries=_entries(row["entries"], before, after))
            moved.add(key)
            results.append((after, row["opened"]))
            if fill.intent_id is not None and Side.parse(fill.side) is Side.SELL:
                # realized = usdc - cost taken out; kept so a FAILED sale is undone exactly
                sales.append((fill.intent_id, {"sold_cost": fill.usdc - realized}))
        now = utcnow()
        if new:
            insert_rows(CopyPosition, [{**positions[key], "updated_at": now} for key in new])
        update_rows(CopyPosition, [
            (positions[key]["id"], {name: positions[key][name] for name in _POSITION_MOVES}
             | {"updated_at": now}) for key in moved - new])
        if sales:
            update_rows(CopyIntent, sales)
    return results


def _entries(entries: int, before: Holding, after: Holding) -> int:
    """Buys since the position was last flat (the entry policy's count): a buy adds one,
    the buy that opens it starts again at one, a sale to nothing ends the count."""
    if after.shares <= 0:
        return 0
    if before.shares <= 0:
        return 1
    return entries + 1 if after.shares > before.shares else entries


def unsell(config_id: UUID, token_id: str, shares: Decimal, cost: Decimal,
           realized: Decimal) -> None:
    """Undo (part of) a live sale: its shares and cost basis back, its realized PnL out."""
    with atomic():
        rows = select_rows(CopyPosition, _POSITION_STATE,
                           {"config": [config_id], "paper": [False], "token_id": [token_id]},
                           for_update=True)
        # A sale always follows a holding (its row stays at zero shares); ``opened`` is
        # left alone: the holding the sale closed is the same one coming back.
        update_rows(CopyPosition, [(row["id"], {
            "shares": row["shares"] + shares, "cost_usdc": row["cost_usdc"] + cost,
            "realized_pnl": row["realized_pnl"] - realized, "updated_at": utcnow()})
            for row in rows])


@dataclass(frozen=True)
class Closed:
    """A copy position closed at its market's payout (``close_at_payout``)."""

    config_id: UUID
    paper: bool
    token_id: str
    shares: Decimal
    realized: Decimal  # shares x payout - the cost basis they carried


def close_at_payout(config_ids: Sequence[UUID], payouts: dict[str, Decimal],
                    paper: bool | None = None) -> list[Closed]:
    """Close the configs' open positions in resolved tokens at each token's payout per
    share (redeemed, or as good as): their shares and cost basis to 0, shares x payout -
    cost booked as realized PnL. Once: a closed position holds no shares, so a later
    resolution, claim or merge of the same token books nothing more."""
    if not config_ids or not payouts:
        return []
    where: dict[str, list[Any]] = {"token_id": list(payouts)}
    if paper is not None:
        where["paper"] = [paper]
    closed: list[Closed] = []
    with atomic():
        rows = []
        ids = list(dict.fromkeys(config_ids))
        for start in range(0, len(ids), 500):
            rows += select_rows(CopyPosition, _POSITION_STATE,
                                {"config": ids[start:start + 500], **where}, for_update=True)
        now = utcnow()
        changes = []
        for row in rows:
            shares = Decimal(row["shares"])
            if shares <= 0:
                continue
            realized = shares * payouts[row["token_id"]] - Decimal(row["cost_usdc"])
            changes.append((row["id"], {"shares": ZERO, "cost_usdc": ZERO,
                                        "realized_pnl": Decimal(row["realized_pnl"]) + realized,
                                        "updated_at": now}))
            closed.append(Closed(row["config"], row["paper"], row["token_id"], shares,
                                 realized))
        update_rows(CopyPosition, changes)
    return closed
