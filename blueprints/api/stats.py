"""Statistics: the public platform figures, the caller's PnL summary and copy latency."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from schemas.stats import PlatformStatsSchema
from schemas.trading import LatencyStatsSchema, UserSummarySchema
from services.trading import stats

blp = Blueprint("stats", __name__, url_prefix="/api/stats", description="Statistics")


@blp.route("/platform")
class PlatformStats(MethodView):
    @blp.response(200, PlatformStatsSchema)
    @blp.errors(429, 503)
    @access.public
    def get(self):
        """Public platform figures: users, copy latency, 24 h trades and volume."""
        return stats.platform_stats()


@blp.route("/summary")
class UserSummary(MethodView):
    @access.requires("read:account")
    @blp.response(200, UserSummarySchema)
    @blp.errors(401, 403, 429, 503)
    def get(self):
        """The caller's PnL (realized from the fills ledger plus unrealized at the live book),
        number of filled trades and fees paid."""
        return stats.user_summary(access.current_principal().user)


@blp.route("/latency")
class Latency(MethodView):
    @access.requires("read:account")
    @blp.response(200, LatencyStatsSchema)
    @blp.errors(401, 403, 429)
    def get(self):
        """Copy latency of the caller's live copy trades over the last 7 days.

        Latency runs from the target wallet's trade being detected to the venue
        acknowledging our order. Count, p50, p95, p99 and max (nearest-rank, ms), overall
        and per UTC day.
        """
        return stats.latency(access.current_principal().user)
