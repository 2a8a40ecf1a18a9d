"""Is this process able to work: can it reach the database and Redis."""

from __future__ import annotations

from models.base import db
from services.platform import redis_client


def checks(redis_url: str, *, redis_answered: bool = False) -> dict[str, dict[str, object]]:
    """Each dependency's reachability: ``{"database": {"ok": ...}, "redis": {"ok": ...}}``.

    ``redis_answered``: Redis already answered this request (the rate limiter's call), so
    it is reachable without a PING of its own.
    """
    found: dict[str, dict[str, object]] = {}
    try:
        db.execute_sql("SELECT 1")
        found["database"] = {"ok": True}
    except Exception as exc:  # any driver error means "not reachable"
        found["database"] = {"ok": False, "detail": type(exc).__name__}
    if redis_answered:
        found["redis"] = {"ok": True}
        return found
    try:
        redis_client.connect(redis_url).ping()
        found["redis"] = {"ok": True}
    except Exception as exc:
        found["redis"] = {"ok": False, "detail": type(exc).__name__}
    return found
