"""PnL over time (a copy config's, or the whole account's): fills replayed with the engine's
average-cost rule, and the change over the last 24 hours and 7 days read off that curve.

Each fill moves the position (``holdings.apply_fill``, as the executor does) and adds a
point. Between fills the open shares are marked at the venue's price history of each
token (``/prices-history``), so unrealized gains and losses show as they happen rather than
only at the last point; a token without history is marked at its latest fill price. Every
point is realized PnL so far plus that mark. The last point is now, marked at the live book
(``configs.pnl``), so the curve ends where the config's PnL figure stands.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.base import utcnow
from models.copying import CopyIntent
from models.trading import Trade
from models.user import User
from services.copying import configs
from services.platform import errors, venues
from services.platform.principal import user_id_of
from services.trading import holdings

MAX_POINTS = 500
MARKED_TOKENS = 20  # price histories read for one curve, at most (one venue read each)
WINDOWS = {"day": timedelta(hours=24), "week": timedelta(days=7)}


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


@dataclass(frozen=True)
class _Move:
    """One fill as the curve books it: pUSD paid on a buy, received on a sell (fees in)."""

    at: datetime
    key: tuple[bool, str]  # (paper, token): paper and live holdings of a token stay apart
    side: str
    shares: Decimal
    usdc: Decimal


def _curve(moves: list[_Move]) -> list[dict[str, Any]]:
    """Every point of the replay of ``moves`` (oldest first), marked between fills at the
    venue's price history."""
    if not moves:
        return []
    moves = sorted(moves, key=lambda m: _epoch(m.at))
    first = _epoch(moves[0].at)
    histories = _histories(list(dict.fromkeys(m.key[1] for m in moves)),
                           datetime.fromtimestamp(first, UTC))
    # The timeline: every fill, and every price point after the first fill.
    times = sorted({_epoch(m.at) for m in moves}
                   | {t for ts, _ in histories.values() for t in ts if t >= first})
    held: dict[tuple[bool, str], holdings.Holding] = {}
    last_fill: dict[tuple[bool, str], Decimal] = {}
    realized = Decimal(0)
    points: list[dict[str, Any]] = []
    cursor = 0
    for at in times:
        while cursor < len(moves) and _epoch(moves[cursor].at) <= at:
            move = moves[cursor]
            holding, gained = holdings.apply_fill(held.get(move.key, holdings.Holding()),
                                                 move.side, move.shares, move.usdc)
            held[move.key] = holding
            last_fill[move.key] = move.usdc / move.shares
            realized += gained
            cursor += 1
        unrealized = sum((h.shares * _mark(histories.get(k[1]), at, last_fill[k]) - h.cost_usdc
                          for k, h in held.items() if h.shares > 0), Decimal(0))
        points.append({"at": datetime.fromtimestamp(at, UTC), "realized_pnl": realized,
                       "unrealized_pnl": unrealized, "total_pnl": realized + unrealized})
    return points


def _now_point(figures: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The curve's last point, now, at the figures the page shows (none when unknown)."""
    if figures is None:
        return []
    return [{"at": utcnow(), "realized_pnl": figures["realized_pnl"],
             "unrealized_pnl": figures["unrealized_pnl"], "total_pnl": figures["total_pnl"]}]


def config_series(user: User | UUID | str, config_id: UUID | str) -> list[dict[str, Any]]:
    """Points ``{at, realized_pnl, unrealized_pnl, total_pnl}``, oldest first; none before
    the first fill."""
    config = configs.get(user, config_id)
    fills = (CopyIntent.select()
             .where(CopyIntent.config == config.id, CopyIntent.filled_size.is_null(False))
             .order_by(CopyIntent.settled_at, CopyIntent.created_at))
    moves = [_Move(intent.settled_at or intent.created_at,
                   (bool(intent.paper), intent.token_id), intent.side.upper(),
                   intent.filled_size, intent.filled_size * (intent.filled_price or Decimal(0)))
             for intent in fills if intent.side and (intent.filled_size or 0) > 0]
    points = _curve(moves)
    if not points:
        return []  # nothing filled yet: the page says so in words, not with a flat line
    try:
        now = configs.pnl(user, config.id)
    except errors.Unavailable:
        now = None  # the venue is down: the curve ends at the last fill
    return (points + _now_point(now))[-MAX_POINTS:]


def user_series(user: User | UUID | str, now: dict[str, Any] | None = None
                ) -> list[dict[str, Any]]:
    """The account's PnL over time from its live fills ledger (every trade, copied or by
    hand, fees included, as ``stats.user_summary`` counts them), ending at ``now``'s
    figures when given; oldest first, every point."""
    rows = Trade.select().where(Trade.user == user_id_of(user))
    moves = [_Move(trade.filled_at or trade.created_at, (False, trade.token_id),
                   trade.side.upper(), trade.filled_size,
                   trade.filled_value + trade.fee if trade.side.upper() == "BUY"
                   else trade.filled_value - trade.fee)
             for trade in rows if trade.filled_size > 0]  # sizes are stored as text
    return _curve(moves) + _now_point(now) if moves else []


def change_since(points: list[dict[str, Any]], since: datetime) -> Decimal:
    """How much total PnL moved from ``since`` to the last point (zero before any fill)."""
    if not points:
        return Decimal(0)
    moment = _epoch(since)
    before = [p for p in points if _epoch(p["at"]) <= moment]
    return points[-1]["total_pnl"] - (before[-1]["total_pnl"] if before else Decimal(0))


def windows(points: list[dict[str, Any]], now: datetime | None = None) -> dict[str, Decimal]:
    """The total PnL's change over the last 24 hours (``day``) and 7 days (``week``)."""
    now = now or utcnow()
    return {name: change_since(points, now - span) for name, span in WINDOWS.items()}
