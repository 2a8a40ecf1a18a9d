"""Statistics: the public platform figures."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from schemas.stats import PlatformStatsSchema
from services import stats

blp = Blueprint("stats", __name__, url_prefix="/api/stats", description="Statistics")


@blp.route("/platform")
class PlatformStats(MethodView):
    @blp.response(200, PlatformStatsSchema)
    @blp.errors(429, 503)
    @access.public
    def get(self):
        """Public platform figures: users, copy latency, 24 h trades and volume."""
        return stats.platform_stats()
