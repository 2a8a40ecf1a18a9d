"""GET /healthz: is the process up, and can it reach the database and Redis."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify

from models.base import db
from services import redis_client

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    """200 when the database and Redis both answer, 503 naming the one that does not."""
    checks: dict[str, dict[str, object]] = {}
    try:
        db.execute_sql("SELECT 1")
        checks["database"] = {"ok": True}
    except Exception as exc:  # any driver error means "not reachable"
        checks["database"] = {"ok": False, "detail": type(exc).__name__}
    try:
        redis_client.connect(current_app.config["REDIS_URL"]).ping()
        checks["redis"] = {"ok": True}
    except Exception as exc:
        checks["redis"] = {"ok": False, "detail": type(exc).__name__}
    body: dict[str, object] = {"status": "ok", "process": {"ok": True}, **checks}
    if not all(check["ok"] for check in checks.values()):
        failed = "database" if not checks["database"]["ok"] else "redis"
        body.update(status="degraded", code="database_error" if failed == "database"
                    else "cache_error", error=f"The {failed} is unreachable.")
        response = jsonify(body)
        response.status_code = 503
        response.headers["Retry-After"] = "5"
        return response
    return jsonify(body)
