"""GET /api/stats/platform: public, null-safe on an empty database."""

from __future__ import annotations

import re
import uuid

from models import User


def test_platform_stats_on_empty_database(client):
    response = client.get("/api/stats/platform")
    assert response.status_code == 200
    body = response.get_json()
    assert body == {"median_latency_ms": 0, "p95_latency_ms": 0, "total_users": 0,
                    "total_trades_24h": 0, "total_volume_usdc_24h": "0"}
    assert re.match(r"^-?[0-9]+(\.[0-9]+)?$", body["total_volume_usdc_24h"])


def test_platform_stats_counts_users(client, bound_db):
    for _ in range(3):
        User.create(email=f"{uuid.uuid4().hex}@example.com")
    assert client.get("/api/stats/platform").get_json()["total_users"] == 3
