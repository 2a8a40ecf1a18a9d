"""Is this process able to work: can it reach the database and Redis."""

from __future__ import annotations

from models.base import db
from services import redis_client


def checks(redis_url: str) -> dict[str, dict[str, object]]:
    """Each dependency's reachability: ``{"database": {"ok": ...}, "redis": {"ok": ...}}``."""
    found: dict[str, dict[str, object]] = {}
    try:
        db.execute_sql("SELECT 1")
        found["database"] = {"ok": True}
    except Exception as exc:  # any driver error means "not reachable"
        found["database"] = {"ok": False, "detail": type(exc).__name__}
    try:
        redis_client.connect(redis_url).ping()
        found["redis"] = {"ok": True}
    except Exception as exc:
        found["redis"] = {"ok": False, "detail": type(exc).__name__}
    return found
