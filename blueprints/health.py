"""GET /healthz: is the process up, and can it reach the database and Redis."""

from __future__ import annotations

from flask import Blueprint, jsonify

from blueprints import ratelimit
from services.platform import health
from services.platform.runtime import runtime

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    """200 when the database and Redis both answer, 503 naming the one that does not."""
    checks = health.checks(runtime().redis_url,
                           redis_answered=ratelimit.redis_answered())
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
