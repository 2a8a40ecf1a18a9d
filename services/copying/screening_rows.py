"""A trader's stored screening row as every surface shows it (the screened leaderboard's
rows, a trader's profile, the comparison, the copy form's expectations)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from chain.tokens import from_base_units
from models.copying import TraderScreening

BPS = Decimal(10000)
DECIMALS = 6  # money is stored in integer base units
WINDOW = "30d"  # the copyability report's default window: the two answer the same question
CANNOT_KNOW = ("the book's depth at the time of each fill (today's book shape is moved to "
               "the price then)", "our place in the queue at a price level")


def amount(value: int | None) -> Decimal | None:
    """Integer base units back to pUSD."""
    return None if value is None else from_base_units(value, DECIMALS)


def _bps(value: int | None) -> Decimal | None:
    return None if value is None else Decimal(value) / BPS


def describe(row: TraderScreening) -> dict[str, Any] | None:
    """One trader's stored replay as the surfaces show it (None before its first replay)."""
    if row.updated_at is None:
        return None
    report = json.loads(row.report or "{}")
    return {
        "kind": "replay",
        "window": WINDOW,
        "delays": report.get("delays"),
        "copier_pnl_p50_usdc": amount(row.copier_pnl_p50),
        "copier_pnl_p95_usdc": amount(row.copier_pnl_p95),
        "trader_pnl_usdc": amount(row.trader_pnl),
        "kept_share": _bps(row.kept_share_bps),
        "win_rate": _bps(row.win_rate_bps),
        "trades": row.trades,
        "volume_usdc": amount(row.volume),
        "avg_hold_seconds": row.avg_hold_seconds,
        "max_drawdown_usdc": amount(row.drawdown),
        "markets": row.markets,
        "categories": json.loads(row.categories or "[]"),
        "last_active_at": row.last_active_at,
        "fills": row.fill_count,
        "updated_at": row.updated_at,
        "flags": sorted(json.loads(row.flags or "{}")),
        "flag_numbers": json.loads(row.flags or "{}"),
        "cannot_know": list(CANNOT_KNOW),
    }


def of(address: str) -> dict[str, Any] | None:
    """The stored replay of ``address`` (lower-case), as ``describe`` shows it; None when
    there is none yet."""
    row = TraderScreening.get_or_none(TraderScreening.address == address.lower())
    return describe(row) if row is not None else None


__all__ = ["CANNOT_KNOW", "DECIMALS", "WINDOW", "amount", "describe", "of"]
