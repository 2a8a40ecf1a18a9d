"""A copy config's execution quality over a period: stage delays (p50, p95, max),
slippage (mean, p95, a histogram), fees, fill ratio, copies, skips and failures, and the
points the config page's charts draw. What each copy records is in
services/trading/execution_quality.py."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from models.base import utcnow
from models.copying import (
    INTENT_CANCELLED,
    INTENT_FAILED,
    INTENT_FILLED,
    INTENT_SKIPPED,
    KIND_MIRROR,
    CopyIntent,
)
from models.user import User
from services.copying.configs.crud import get as get_config
from services.platform import errors
from services.trading.execution_quality import CENTI_BPS, STAGES
from services.trading.stats import percentile, stage_figures

PERIODS = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}
HISTOGRAM_BUCKET_BPS = 25  # the slippage histogram's bucket width


def config_quality(user: User | UUID | str, config_id: UUID | str, period: str,
                   now: datetime | None = None) -> dict[str, Any]:
    """A config's execution quality over ``period`` (24h, 7d, 30d): stage delays, slippage,
    fees, fill ratio, copies, skips and failures, and the points its charts draw."""
    if period not in PERIODS:
        raise errors.ValidationFailed(
            f"period must be one of {', '.join(PERIODS)}.",
            fields={"period": [f"Must be one of {', '.join(PERIODS)}."]})
    config = get_config(user, config_id)
    now = now or utcnow()
    since = now - PERIODS[period]
    columns = [CopyIntent.status, CopyIntent.created_at, CopyIntent.slippage_bps,
               CopyIntent.fee, CopyIntent.filled_size,
               *(getattr(CopyIntent, column) for _, column in STAGES)]
    rows = list(CopyIntent.select(*columns).where(
        CopyIntent.config == config.id, CopyIntent.kind == KIND_MIRROR,
        CopyIntent.created_at >= since).order_by(CopyIntent.created_at).dicts())
    copies = [row for row in rows if row["status"] != INTENT_SKIPPED]
    filled = [row for row in copies if row["status"] == INTENT_FILLED]
    slips = [row["slippage_bps"] for row in filled if row["slippage_bps"] is not None]
    return {
        "config_id": config.id, "period": period, "since": since, "until": now,
        "copies": len(copies), "filled": len(filled),
        "skips": sum(1 for row in rows if row["status"] == INTENT_SKIPPED),
        "failures": sum(1 for row in copies if row["status"] == INTENT_FAILED),
        "unfilled": sum(1 for row in copies if row["status"] == INTENT_CANCELLED),
        "fill_ratio": (Decimal(len(filled)) / len(copies)).quantize(Decimal("0.0001"))
        if copies else None,
        "fees": sum((row["fee"] or Decimal(0) for row in filled), Decimal(0)),
        "slippage_bps": {
            "count": len(slips),
            "mean": (sum(slips, Decimal(0)) / len(slips)).quantize(CENTI_BPS) if slips
            else None,
            "p95": percentile(slips, 95) if slips else None,
            "max": max(slips) if slips else None},
        "stages": stage_figures(copies),
        "histogram": histogram(slips),
        "points": [{"at": row["created_at"], "slippage_bps": row["slippage_bps"],
                    **{f"{name}_ms": row[column] for name, column in STAGES}}
                   for row in filled],
    }


def histogram(slips: list[Decimal]) -> list[dict[str, Any]]:
    """Slippage counts per ``HISTOGRAM_BUCKET_BPS`` bucket (its lower edge), lowest first."""
    counts: dict[int, int] = {}
    for value in slips:
        edge = math.floor(value / HISTOGRAM_BUCKET_BPS) * HISTOGRAM_BUCKET_BPS
        counts[edge] = counts.get(edge, 0) + 1
    return [{"from_bps": edge, "to_bps": edge + HISTOGRAM_BUCKET_BPS, "count": count}
            for edge, count in sorted(counts.items())]


__all__ = ["PERIODS", "config_quality", "histogram"]
