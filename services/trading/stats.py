"""Platform and user statistics, computed from the database (and the live book for PnL).

Copy latency is a live copy trade's ``latency_ms``: from the moment the target wallet's
trade was detected to the venue acknowledging our order; its split by stage (detection,
decision, placement, ack, settlement, taker delay) comes from the copies' intents.
Percentiles use the nearest-rank method over whole milliseconds. Every figure is zero (or
empty) on an empty database, never null.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from models import User
from models.base import utcnow
from models.copying import INTENT_SKIPPED, CopyIntent
from models.trading import TRADE_FILLED, Trade
from services.platform.principal import user_id_of
from services.trading import positions
from services.trading.execution_quality import STAGES

LATENCY_DAYS = 7


def percentile(values: Sequence[Any], pct: float) -> Any:
    """Nearest-rank percentile of ``values`` (0 when empty)."""
    if not values:
        return 0
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def _latency_figures(values: list[int]) -> dict[str, int]:
    return {"count": len(values), "p50_ms": percentile(values, 50),
            "p95_ms": percentile(values, 95), "p99_ms": percentile(values, 99),
            "max_ms": max(values) if values else 0}


def stage_figures(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Count, p50, p95 and max of each stage over the rows that measured it (zeros: none)."""
    table = list(rows)
    figures = {}
    for name, column in STAGES:
        values = [row[column] for row in table if row.get(column) is not None]
        figures[name] = {"count": len(values), "p50_ms": percentile(values, 50),
                         "p95_ms": percentile(values, 95),
                         "max_ms": max(values) if values else 0}
    return figures


def platform_stats(now: datetime | None = None) -> dict[str, Any]:
    """Public figures: users, 24 h trades and volume, copy latency; zeros on an empty database."""
    since = (now or utcnow()) - timedelta(hours=24)
    recent = list(Trade.select(Trade.filled_value, Trade.latency_ms)
                  .where(Trade.status == TRADE_FILLED, Trade.filled_at >= since))
    latencies = [t.latency_ms for t in recent if t.latency_ms is not None]
    return {
        "median_latency_ms": percentile(latencies, 50),
        "p95_latency_ms": percentile(latencies, 95),
        "total_users": User.select().count(),
        "total_trades_24h": len(recent),
        "total_volume_usdc_24h": sum((t.filled_value for t in recent), Decimal(0)),
    }


def user_summary(user: User | UUID | str) -> dict[str, Any]:
    """UserSummary: realized PnL (our fills ledger) plus unrealized PnL of open positions."""
    user_id = user_id_of(user)
    held = positions.ledger(user_id)
    realized = sum((entry.realized_pnl for entry in held.values()), Decimal(0))
    unrealized = sum((p["unrealized_pnl"] for p in positions.list_positions(user_id)),
                     Decimal(0))
    rows = list(Trade.select(Trade.status, Trade.fee).where(Trade.user == user_id))
    return {
        "user_id": user_id,
        "total_pnl": (realized + unrealized).quantize(Decimal("0.000001")),
        "realized_pnl": realized.quantize(Decimal("0.000001")),
        "trade_count": sum(1 for t in rows if t.status == TRADE_FILLED),
        "fees_paid": sum((t.fee for t in rows), Decimal(0)),
    }


def latency(user: User | UUID | str, days: int = LATENCY_DAYS,
            now: datetime | None = None) -> dict[str, Any]:
    """The user's copy latency over the last ``days`` days: overall and per UTC day."""
    now = now or utcnow()
    since = now - timedelta(days=days)
    rows = (Trade.select(Trade.latency_ms, Trade.created_at)
            .where(Trade.user == user_id_of(user), Trade.latency_ms.is_null(False),
                   Trade.created_at >= since))
    by_day: dict[date, list[int]] = defaultdict(list)
    values: list[int] = []
    for row in rows:
        values.append(row.latency_ms)
        by_day[row.created_at.date()].append(row.latency_ms)
    first = (now - timedelta(days=days - 1)).date()
    per_day = [{"date": first + timedelta(days=i), **_latency_figures(by_day[first + timedelta(
        days=i)])} for i in range(days)]
    # The split by stage, over the user's copies (live and paper) of the same days.
    copies = (CopyIntent.select(*(getattr(CopyIntent, column) for _, column in STAGES))
              .where(CopyIntent.user_id == user_id_of(user), CopyIntent.created_at >= since,
                     CopyIntent.status != INTENT_SKIPPED).dicts())
    return {"days": days, "since": since, **_latency_figures(values), "per_day": per_day,
            "stages": stage_figures(copies)}
