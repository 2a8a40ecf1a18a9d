"""What a trader's fills say about copying them, pure: win rate, hold times, and the flags.

The screened leaderboard (``screening``) runs this over the fills of its window and the
replay's numbers (``copyability.build_report``). Each flag carries the numbers behind it, and
the thresholds are the operator's (``ScreeningConfig``; docs/user/traders.md explains each):

- ``market_maker``: most fills have a fill on the other side of the same market within a few
  seconds (quoting both sides), and, where the venue says who made each fill, most are maker
  fills;
- ``high_frequency``: the median hold of the shares sold is short and there are many round
  trips (sells closing earlier buys, first in first out);
- ``toxic_for_copying``: the copies made at our typical delay lose more than a set share of
  what the same rules would have made without delay (the edge a copier could reach) to the
  late price and the moved book;
- ``thin_history``: too few fills in the window to say;
- ``wash_like``: many fills pair with an opposite fill of the same token at the same price
  and size at about the same time (trading with oneself);
- ``inactive``: no fill in some days.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from statistics import median_low
from typing import Any

from config import ScreeningConfig
from services.copying.copyability import TokenFacts, target_pnl
from services.copying.mirror import TargetFill
from venue.models import Side

ZERO = Decimal(0)
DAY = 86400


@dataclass(frozen=True)
class FillStats:
    """The trader's own record over the window."""

    trades: int
    volume: Decimal
    markets: int
    categories: tuple[str, ...]
    last_active: int | None  # unix seconds of the newest fill
    win_rate: Decimal | None  # share of tokens traded whose fills made money at the mark
    avg_hold_seconds: int | None  # share-weighted, over the shares sold
    median_hold_seconds: int | None  # over the sells' matched lots
    round_trips: int  # sells that closed (part of) an earlier buy
    two_sided_share: Decimal | None  # fills with a fill on the other side nearby
    maker_share: Decimal | None  # of fills whose role the venue gives
    wash_share: Decimal | None  # fills paired with a mirror-image fill


def _share(part: int, whole: int) -> Decimal | None:
    return (Decimal(part) / whole).quantize(Decimal("0.0001")) if whole else None


def _holds(fills: Sequence[TargetFill]) -> tuple[list[tuple[int, Decimal]], int]:
    """(hold seconds, shares) of every sold piece matched first in first out to the buys
    before it, and how many sells matched any."""
    lots: dict[str, list[list[Any]]] = {}
    pieces: list[tuple[int, Decimal]] = []
    trips = 0
    for fill in fills:
        queue = lots.setdefault(fill.token_id, [])
        if fill.side == Side.BUY:
            queue.append([fill.timestamp, fill.size])
            continue
        left, matched = fill.size, False
        while left > 0 and queue:
            bought_at, shares = queue[0]
            taken = min(shares, left)
            pieces.append((fill.timestamp - bought_at, taken))
            matched = True
            left -= taken
            if taken == shares:
                queue.pop(0)
            else:
                queue[0][1] = shares - taken
        trips += matched
    return pieces, trips


def _paired(fills: Sequence[TargetFill], seconds: int, same_terms: bool) -> int:
    """How many fills have an opposite-side fill of the same market within ``seconds``
    (of the same token at the same price and size, when ``same_terms``)."""
    times: dict[tuple[Any, ...], dict[Side, list[int]]] = {}

    def group(fill: TargetFill) -> tuple[Any, ...]:
        if same_terms:
            return (fill.token_id, fill.price, fill.size)
        return (fill.condition_id or fill.token_id,)

    for fill in fills:
        times.setdefault(group(fill), {Side.BUY: [], Side.SELL: []})[fill.side].append(
            fill.timestamp)
    for sides in times.values():
        for stamps in sides.values():
            stamps.sort()
    count = 0
    for fill in fills:
        other = times[group(fill)][Side.SELL if fill.side == Side.BUY else Side.BUY]
        at = bisect_left(other, fill.timestamp - seconds)
        count += at < len(other) and other[at] <= fill.timestamp + seconds
    return count


def fill_stats(fills: Sequence[TargetFill], facts: Mapping[str, TokenFacts],
               roles: Sequence[str | None], quote_seconds: int) -> FillStats:
    """The record of ``fills`` (oldest first); ``roles`` their maker/taker roles (None when
    the venue does not say)."""
    pnl_by_token: dict[str, Decimal] = {}
    for fill in fills:
        pnl_by_token[fill.token_id] = pnl_by_token.get(fill.token_id, ZERO) + target_pnl(
            fill, facts)
    wins = sum(1 for pnl in pnl_by_token.values() if pnl > 0)
    pieces, trips = _holds(fills)
    sold = sum((shares for _, shares in pieces), ZERO)
    avg_hold = (int(sum((Decimal(held) * shares for held, shares in pieces), ZERO) / sold)
                if sold else None)
    known = [role for role in roles if role]
    categories = sorted({c for f in fills if f.token_id in facts
                         for c in facts[f.token_id].view.categories})
    return FillStats(
        trades=len(fills), volume=sum((f.value_usdc for f in fills), ZERO),
        markets=len({f.condition_id or f.token_id for f in fills}),
        categories=tuple(categories),
        last_active=max((f.timestamp for f in fills), default=None),
        win_rate=_share(wins, len(pnl_by_token)),
        avg_hold_seconds=avg_hold,
        median_hold_seconds=median_low([held for held, _ in pieces]) if pieces else None,
        round_trips=trips,
        two_sided_share=_share(_paired(fills, quote_seconds, False), len(fills)),
        maker_share=_share(sum(1 for r in known if r == "maker"), len(known)),
        wash_share=_share(_paired(fills, quote_seconds, True), len(fills)))


def flags(stats: FillStats, edge: Decimal, copier_pnl: Decimal, now: int,
          limits: ScreeningConfig) -> dict[str, dict[str, Any]]:
    """The flags these numbers raise, each with the numbers and the threshold behind it;
    ``edge`` is the copies' PnL without delay, ``copier_pnl`` at our typical delay."""
    raised: dict[str, dict[str, Any]] = {}
    if stats.two_sided_share is not None and stats.two_sided_share >= limits.mm_two_sided_share \
            and (stats.maker_share is None or stats.maker_share >= Decimal("0.5")):
        raised["market_maker"] = {"two_sided_share": stats.two_sided_share,
                                  "maker_share": stats.maker_share,
                                  "threshold": limits.mm_two_sided_share,
                                  "quote_seconds": limits.mm_quote_seconds}
    if stats.median_hold_seconds is not None \
            and stats.median_hold_seconds < limits.hf_median_hold_seconds \
            and stats.round_trips >= limits.hf_min_round_trips:
        raised["high_frequency"] = {"median_hold_seconds": stats.median_hold_seconds,
                                    "round_trips": stats.round_trips,
                                    "max_median_hold_seconds": limits.hf_median_hold_seconds,
                                    "min_round_trips": limits.hf_min_round_trips}
    if edge > 0:
        lost = ((edge - copier_pnl) / edge).quantize(Decimal("0.0001"))
        if lost > limits.toxic_edge_share:
            raised["toxic_for_copying"] = {"edge_usdc": edge,
                                           "copier_pnl_usdc": copier_pnl,
                                           "lost_share": lost,
                                           "threshold": limits.toxic_edge_share}
    if stats.trades < limits.thin_min_fills:
        raised["thin_history"] = {"fills": stats.trades, "min_fills": limits.thin_min_fills}
    if stats.wash_share is not None and stats.trades >= 2 \
            and stats.wash_share >= limits.wash_share:
        raised["wash_like"] = {"wash_share": stats.wash_share, "threshold": limits.wash_share}
    idle = None if stats.last_active is None else (now - stats.last_active) // DAY
    if idle is None or idle >= limits.inactive_days:
        raised["inactive"] = {"days_since_last_fill": idle, "days": limits.inactive_days}
    return raised


__all__ = ["FillStats", "fill_stats", "flags"]
