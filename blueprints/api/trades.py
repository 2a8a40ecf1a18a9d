"""Trades: the caller's live trades ledger, newest first, paginated by headers."""

from __future__ import annotations

from uuid import UUID

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.api.pagination import PAGINATION_HEADERS, paged
from schemas.trading import TradesArgsSchema, TradeSchema
from services.trading import trades

blp = Blueprint("trades", __name__, url_prefix="/api/trades", description="Trades")




@blp.route("")
class Trades(MethodView):
    @access.requires("read:trades")
    @blp.arguments(TradesArgsSchema, location="query")
    @blp.response(200, TradeSchema(many=True), headers=PAGINATION_HEADERS)
    @blp.errors(400, 401, 403, 429)
    def get(self, args):
        """The caller's trades, newest first (bare array, X-Pagination-* headers).

        `config_id` keeps the trades of one copy config. Status: `pending` (sent; resting
        or awaiting the venue) -> `filled` (shares changed hands; a partial fill counts
        once the order is done) | `cancelled` (done without a fill) | `failed` (refused
        by the venue, or never reached it). `size` is the filled size once anything
        filled, else the size asked for; `filled_price` the average fill price (0 before
        any fill); `usdc_value` the pUSD exchanged, fees excluded; `latency_ms` is set on
        copy trades (target's trade detected -> our order acknowledged by the venue).
        """
        return paged(trades.list_trades(access.current_principal().user, **args))


@blp.route("/<uuid:trade_id>")
class TradeItem(MethodView):
    @access.requires("read:trades")
    @blp.response(200, TradeSchema)
    @blp.errors(401, 403, 404, 429)
    def get(self, trade_id: UUID):
        """One of the caller's trades; 404 `not_found` for unknown ids and others' trades."""
        return trades.get_trade(access.current_principal().user, trade_id)

