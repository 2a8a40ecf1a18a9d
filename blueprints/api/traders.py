"""Traders: the venue's leaderboard and one trader's profile (JWT or ``read:markets``)."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from schemas.markets import TraderProfileSchema, TradersArgsSchema, TraderSchema
from services.copying import traders
from services.markets import markets

blp = Blueprint("traders", __name__, url_prefix="/api/traders", description="Traders")

# The REST words for the venue's leaderboard options (MCP takes the venue's own).
ORDER_BY = {"pnl": "PNL", "volume": "VOL"}


@blp.route("")
class Traders(MethodView):
    @access.requires("read:markets")
    @blp.arguments(TradersArgsSchema, location="query")
    @blp.response(200, TraderSchema(many=True))
    @blp.errors(400, 401, 403, 429, 503)
    def get(self, args):
        """The venue's leaderboard for a `period` (day, week, month, all), ranked by `pnl` or
        `volume`: candidates to copy (MCP `list_top_traders`)."""
        return markets.top_traders(args["period"].upper(), ORDER_BY[args["order_by"]],
                                   args["limit"], args["category"])


@blp.route("/<string:address>")
class TraderItem(MethodView):
    @access.requires("read:markets")
    @blp.response(200, TraderProfileSchema)
    @blp.errors(400, 401, 403, 429, 503)
    def get(self, address: str):
        """One trader's profile: PnL over time, volume, markets traded, recent trades and
        open positions, as the venue shows them. 400 `validation_failed` (`address`) for
        anything but a wallet address (a mixed-case one must pass its EIP-55 checksum)."""
        return traders.trader_profile(traders.wallet_address(address))
