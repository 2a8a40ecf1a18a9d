"""Positions: the wallet's holdings valued from the live book, and selling them at market."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.idempotency import idempotent
from schemas import request_examples
from schemas.trading import (
    PositionsArgsSchema,
    PositionSchema,
    SellPositionsRequestSchema,
    SellPositionsResponseSchema,
)
from services.trading import positions

blp = Blueprint("positions", __name__, url_prefix="/api/positions", description="Positions")


@blp.route("")
class Positions(MethodView):
    @access.requires("read:positions")
    @blp.arguments(PositionsArgsSchema, location="query")
    @blp.response(200, PositionSchema(many=True))
    @blp.errors(400, 401, 403, 429, 503)
    def get(self, args):
        """The caller's positions (bare array, not paginated), each with the venue's `status`.

        Sizes are the venue's (Data API positions of the wallet's maker address); cost
        basis and realized PnL come from the platform's fills ledger (average cost, fees
        included); current price is the live book's midpoint, or the settlement price once
        resolved, when `claimable_value` is also set. `status` is the venue's as it wrote
        it (`OPEN`, `REDEEMABLE`, `REDEEMABLE_LOST`, `MERGEABLE`, `CLOSED`, or one this
        version does not know): a `REDEEMABLE_LOST` position is never offered for a claim
        (`claimable_value` 0), a `MERGEABLE` one carries `merge_value`.
        """
        return positions.list_positions(access.current_principal().user, args["active_only"])


@blp.route("/sell")
class SellPositions(MethodView):
    @access.requires("trade:execute")
    @idempotent
    @blp.arguments(SellPositionsRequestSchema, example=request_examples.SELL)
    @blp.response(200, SellPositionsResponseSchema)
    @blp.errors(400, 401, 403, 409, 429, 503)
    def post(self, body):
        """Sell the whole position in each token at market (fill-and-kill), one result each.

        No preview is needed. Each token's size is floored to the venue's 0.01-share step;
        a token without a position, or without bids, is `rejected` with the reason. A venue
        that is restarting, restricted or down answers 503 `polymarket_unavailable` with
        `Retry-After` instead (retry with the same `Idempotency-Key`).
        """
        return {"results": positions.sell_positions(access.current_principal().user,
                                                    body["token_ids"])}
