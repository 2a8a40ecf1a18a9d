"""A copy config's PnL over time: its fills replayed with the engine's average-cost rule.

Each fill moves the position (``holdings.apply_fill``, as the executor does) and adds a
point: realized PnL so far, plus the open shares marked at each token's latest fill
price. The last point is now, marked at the live book (``configs.pnl``), so the curve
ends where the config's PnL figure stands.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any
from uuid import UUID

from models.base import utcnow
from models.copying import CopyIntent
from models.user import User
from services.copying import configs
from services.platform import errors
from services.trading import holdings

MAX_POINTS = 500


def config_series(user: User | UUID | str, config_id: UUID | str) -> list[dict[str, Any]]:
    """Points ``{at, realized_pnl, unrealized_pnl, total_pnl}``, oldest first."""
    config = configs.get(user, config_id)
    fills = (CopyIntent.select()
             .where(CopyIntent.config == config.id, CopyIntent.filled_size.is_null(False))
             .order_by(CopyIntent.settled_at, CopyIntent.created_at))
    held: dict[tuple[bool, str], holdings.Holding] = {}
    marks: dict[tuple[bool, str], Decimal] = {}
    realized = Decimal(0)
    points: list[dict[str, Any]] = []
    for intent in fills:
        shares = intent.filled_size or Decimal(0)
        price = intent.filled_price or Decimal(0)
        if shares <= 0 or not intent.side:
            continue
        key = (bool(intent.paper), intent.token_id)
        holding, gained = holdings.apply_fill(held.get(key, holdings.Holding()),
                                             intent.side.upper(), shares, shares * price)
        held[key] = holding
        marks[key] = price
        realized += gained
        unrealized = sum((h.shares * marks[k] - h.cost_usdc for k, h in held.items()
                          if h.shares > 0), Decimal(0))
        points.append({"at": intent.settled_at or intent.created_at, "realized_pnl": realized,
                       "unrealized_pnl": unrealized, "total_pnl": realized + unrealized})
    try:
        now = configs.pnl(user, config.id)
    except errors.Unavailable:
        now = None  # the venue is down: the curve ends at the last fill
    if now is not None:
        points.append({"at": utcnow(), "realized_pnl": now["realized_pnl"],
                       "unrealized_pnl": now["unrealized_pnl"], "total_pnl": now["total_pnl"]})
    return points[-MAX_POINTS:]
