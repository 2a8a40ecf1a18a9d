"""A copy config's PnL over time: its fills replayed with the engine's average-cost rule.

Each fill moves the position (``holdings.apply_fill``, as the executor does) and adds a
point. Between fills the open shares are marked at the venue's price history of each
token (``/prices-history``), so unrealized gains and losses show as they happen rather than
only at the last point; a token without history is marked at its latest fill price. Every
point is realized PnL so far plus that mark. The last point is now, marked at the live book
(``configs.pnl``), so the curve ends where the config's PnL figure stands.
"""

from __future__ import annotations

import bisect
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.base import utcnow
from models.copying import CopyIntent
from models.user import User
from services.copying import configs
from services.platform import errors, venues
from services.trading import holdings

MAX_POINTS = 500
MARKED_TOKENS = 20  # price histories read for one curve, at most (one venue read each)


def _histories(tokens: list[str], since: datetime) -> dict[str, tuple[list[float], list[Decimal]]]:
    """Each token's price history from ``since``: sorted epoch seconds and their prices."""
    out: dict[str, tuple[list[float], list[Decimal]]] = {}
    client = venues.client()
    now = int(utcnow().replace(tzinfo=UTC).timestamp())
    for token in tokens[:MARKED_TOKENS]:
        try:
            points = client.clob.prices_history(token, start_ts=int(since.timestamp()),
                                                end_ts=now)
        except Exception:  # no history (or the venue is down): the fill price marks it
            continue
        ordered = sorted(points, key=lambda p: p.t)
        out[token] = ([float(p.t) for p in ordered], [p.p for p in ordered])
    return out


def _mark(history: tuple[list[float], list[Decimal]] | None, at: float, fallback: Decimal
          ) -> Decimal:
    """The price at ``at``: the last history point at or before it, else ``fallback``."""
    if not history:
        return fallback
    index = bisect.bisect_right(history[0], at) - 1
    return history[1][index] if index >= 0 else fallback


def _epoch(moment: datetime) -> float:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def config_series(user: User | UUID | str, config_id: UUID | str) -> list[dict[str, Any]]:
    """Points ``{at, realized_pnl, unrealized_pnl, total_pnl}``, oldest first; none before
    the first fill."""
    config = configs.get(user, config_id)
    fills = (CopyIntent.select()
             .where(CopyIntent.config == config.id, CopyIntent.filled_size.is_null(False))
             .order_by(CopyIntent.settled_at, CopyIntent.created_at))
    moves = []
    for intent in fills:
        shares = intent.filled_size or Decimal(0)
        price = intent.filled_price or Decimal(0)
        if shares > 0 and intent.side:
            moves.append((intent.settled_at or intent.created_at, intent, shares, price))
    histories = _histories(list(dict.fromkeys(m[1].token_id for m in moves)),
                           moves[0][0].replace(tzinfo=UTC)) if moves else {}
    # The timeline: every fill, and every price point after the first fill.
    times = sorted({_epoch(m[0]) for m in moves}
                   | {t for ts, _ in histories.values() for t in ts
                      if moves and t >= _epoch(moves[0][0])})
    held: dict[tuple[bool, str], holdings.Holding] = {}
    last_fill: dict[tuple[bool, str], Decimal] = {}
    realized = Decimal(0)
    points: list[dict[str, Any]] = []
    cursor = 0
    for at in times:
        while cursor < len(moves) and _epoch(moves[cursor][0]) <= at:
            _, intent, shares, price = moves[cursor]
            key = (bool(intent.paper), intent.token_id)
            holding, gained = holdings.apply_fill(held.get(key, holdings.Holding()),
                                                 intent.side.upper(), shares, shares * price)
            held[key] = holding
            last_fill[key] = price
            realized += gained
            cursor += 1
        unrealized = sum((h.shares * _mark(histories.get(k[1]), at, last_fill[k]) - h.cost_usdc
                          for k, h in held.items() if h.shares > 0), Decimal(0))
        points.append({"at": datetime.fromtimestamp(at, UTC), "realized_pnl": realized,
                       "unrealized_pnl": unrealized, "total_pnl": realized + unrealized})
    if not moves:
        return []  # nothing filled yet: the page says so in words, not with a flat line
    try:
        now = configs.pnl(user, config.id)
    except errors.Unavailable:
        now = None  # the venue is down: the curve ends at the last fill
    if now is not None:
        points.append({"at": utcnow(), "realized_pnl": now["realized_pnl"],
                       "unrealized_pnl": now["unrealized_pnl"], "total_pnl": now["total_pnl"]})
    return points[-MAX_POINTS:]
