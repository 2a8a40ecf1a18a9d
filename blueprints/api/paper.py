"""The paper book: simulated positions and trades, priced from the live order book."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.api.pagination import PAGINATION_HEADERS, paged
from schemas.common import PageArgsSchema
from schemas.trading import PaperTradeSchema, PositionsArgsSchema, PositionSchema
from services.trading import paper

blp = Blueprint("paper", __name__, url_prefix="/api/paper", description="Paper trading")


@blp.route("/positions")
class PaperPositions(MethodView):
    @access.requires("read:positions")
    @blp.arguments(PositionsArgsSchema, location="query")
    @blp.response(200, PositionSchema(many=True))
    @blp.errors(400, 401, 403, 429, 503)
    def get(self, args):
        """Positions of the paper book (bare array), valued at the live book's midpoint."""
        return paper.list_positions(access.current_principal().user, args["active_only"])


@blp.route("/trades")
class PaperTrades(MethodView):
    @access.requires("read:trades")
    @blp.arguments(PageArgsSchema, location="query")
    @blp.response(200, PaperTradeSchema(many=True), headers=PAGINATION_HEADERS)
    @blp.errors(400, 401, 403, 429)
    def get(self, args):
        """Simulated fills, newest first (bare array, X-Pagination-* headers).

        Each fill walked the live book level by level and paid the market's taker fee;
        `failed` fills say why in `reason` (nothing to fill against, no paper position).
        """
        return paged(paper.list_trades(access.current_principal().user, **args))
