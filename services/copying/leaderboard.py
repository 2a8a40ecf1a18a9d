"""The screened leaderboard as surfaces show it: the venue's ranking joined with each trader's
stored replay (``screening``), filtered, searched and sorted; and traders side by side.

Every surface (``GET /api/traders``, MCP ``list_top_traders``, the dashboard's traders page)
calls ``top_traders`` with the same arguments (``schemas.markets.TradersArgsSchema``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from models.base import utcnow
from models.copying import TraderScreening
from schemas.screening import COLUMNS, RANGED, SORTS, TRADER_FLAGS
from services.copying import screening, screening_rows, traders
from services.markets import markets
from services.platform import errors

COMPARE_MAX = 5


def _matches(row: Mapping[str, Any], args: Mapping[str, Any]) -> bool:
    shown = row["screening"]
    query = (args.get("q") or "").strip().lower()
    if query and query not in row["address"].lower() and query not in (row["name"] or
                                                                       "").lower():
        return False
    screened_filters = any(args.get(f"{edge}_{name}") is not None
                           for edge in ("min", "max") for name in RANGED) or any(
        args.get(name) for name in ("flag", "without_flag", "traded_category",
                                    "active_within_days"))
    if shown is None:
        return not screened_filters
    if any(flag not in shown["flags"] for flag in args.get("flag") or ()):
        return False
    if any(flag in shown["flags"] for flag in args.get("without_flag") or ()):
        return False
    wanted = (args.get("traded_category") or "").lower()
    if wanted and wanted not in {c.lower() for c in shown["categories"]}:
        return False
    days = args.get("active_within_days")
    if days is not None and (shown["last_active_at"] is None or
                             shown["last_active_at"] < utcnow() - timedelta(days=days)):
        return False
    for name in RANGED:
        value = shown[COLUMNS[name]]
        low, high = args.get(f"min_{name}"), args.get(f"max_{name}")
        if (low is not None or high is not None) and value is None:
            return False
        if (low is not None and value < low) or (high is not None and value > high):
            return False
    return True


def _sort_key(row: Mapping[str, Any], sort: str) -> Any:
    if sort == "rank":
        return row["rank"]
    if sort == "pnl":
        return row["pnl"]
    shown = row["screening"]
    return None if shown is None else shown[COLUMNS[sort]]


def _sorted(rows: list[dict[str, Any]], sort: str, direction: str) -> list[dict[str, Any]]:
    """Rows by ``sort`` (``asc`` or ``desc``); rows without the number always last."""
    known = [r for r in rows if _sort_key(r, sort) is not None]
    unknown = [r for r in rows if _sort_key(r, sort) is None]
    known.sort(key=lambda r: (_sort_key(r, sort), -r["rank"]) if direction == "desc"
               else (_sort_key(r, sort), r["rank"]), reverse=direction == "desc")
    return known + sorted(unknown, key=lambda r: r["rank"])


def top_traders(period: str, order_by: str, limit: int, category: str | None = None,
                **args: Any) -> list[dict[str, Any]]:
    """The venue's leaderboard (``period`` DAY..ALL, ``order_by`` PNL or VOL), each row with
    its screened replay (or null), filtered, searched and sorted by ``args`` (the surfaces'
    ``TradersArgsSchema``), the first ``limit``."""
    sort = args.get("sort") or "rank"
    if sort not in SORTS:
        raise errors.ValidationFailed(fields={"sort": [f"One of {', '.join(SORTS)}."]})
    direction = args.get("direction") or ("asc" if sort == "rank" else "desc")
    for name in ("flag", "without_flag"):
        unknown = [f for f in args.get(name) or () if f not in TRADER_FLAGS]
        if unknown:
            raise errors.ValidationFailed(fields={name: [
                f"One of {', '.join(TRADER_FLAGS)}."]})
    board = markets.top_traders(period, order_by, screening.BOARD_SIZE, category)
    stored = {row.address: row for row in TraderScreening.select().where(
        TraderScreening.address.in_([r["address"].lower() for r in board]))}
    rows = []
    for entry in board:
        found = stored.get(entry["address"].lower())
        rows.append({**entry, "screening": screening_rows.describe(found) if found else None})
    chosen = [r for r in rows if _matches(r, args)]
    return _sorted(chosen, sort, direction)[:limit]


def screened(address: str) -> dict[str, Any] | None:
    """One trader's stored replay (``screening_rows.of``); None when it has none, or when
    the text is no wallet address."""
    try:
        return screening_rows.of(traders.wallet_address(address))
    except errors.ValidationFailed:
        return None


def compare(text: str) -> list[dict[str, Any]]:
    """Up to COMPARE_MAX traders (``text``: comma-separated addresses) side by side: each
    one's numbers at both delays, the rules' skips by reason, the capital it needs and its
    equity curve (nulls before its first replay)."""
    addresses = list(dict.fromkeys(
        traders.wallet_address(part.strip()) for part in text.split(",") if part.strip()))
    if not 1 <= len(addresses) <= COMPARE_MAX:
        raise errors.ValidationFailed(fields={"addresses": [
            f"One to {COMPARE_MAX} wallet addresses, comma-separated."]})
    stored = {row.address: row for row in TraderScreening.select().where(
        TraderScreening.address.in_(addresses))}
    found = []
    for address in addresses:
        row = stored.get(address)
        report = json.loads(row.report) if row is not None and row.report else None
        found.append({
            "address": address, "name": row.name if row is not None else "",
            "screening": screening_rows.describe(row) if row is not None else None,
            "p50": report["p50"] if report else None,
            "p95": report["p95"] if report else None,
            "rules": report["rules"] if report else None,
            "equity": report.get("equity", []) if report else [],
        })
    return found


__all__ = ["COMPARE_MAX", "compare", "screened", "top_traders"]
