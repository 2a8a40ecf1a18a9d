"""Orders: preview, place, list and cancel open orders (under /api/markets)."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.idempotency import idempotent
from schemas import request_examples
from schemas.trading import (
    CancelResultSchema,
    OpenOrderSchema,
    OrderPreviewSchema,
    PlaceOrderRequestSchema,
    PlaceOrderResponseSchema,
    PlaceOrderSchema,
)
from services.trading import order_cancels, order_reads, orders, previews

blp = Blueprint("orders", __name__, url_prefix="/api/markets", description="Orders")


@blp.route("/order/preview")
class OrderPreview(MethodView):
    @access.requires("trade:execute")
    @idempotent
    @blp.arguments(PlaceOrderRequestSchema, example=request_examples.ORDER_PREVIEW)
    @blp.response(200, OrderPreviewSchema)
    @blp.errors(400, 401, 403, 404, 409, 429, 503)
    def post(self, body):
        """Quote an order against the live book without sending it; answers a preview_id.

        Shows the exact order that would be sent: for a market order the protective limit
        (the worst book level its size needs, moved 3% or at least one tick further) and
        the average price walking the book gives, for a limit order the GTC limit; the
        estimated shares, cost and taker fee, the slippage versus the midpoint and a
        one-line confirmation. The preview is bound to the caller and to these exact
        parameters, places at most one order, and expires after 3 minutes.
        """
        return previews.create(access.current_principal().user, **body)


@blp.route("/order")
class PlaceOrder(MethodView):
    @access.requires("trade:execute")
    @idempotent
    @blp.arguments(PlaceOrderSchema, example=request_examples.ORDER)
    @blp.response(200, PlaceOrderResponseSchema)
    @blp.errors(400, 401, 402, 403, 404, 409, 429, 503)
    def post(self, body):
        """Place a live order; needs the unexpired, unused `preview_id` of the same order.

        `size` is in shares (at most 2 decimals). Market orders go out fill-or-kill at the
        preview's protective limit (a buy as a pUSD budget, so never more shares than
        asked); limit orders go out good-till-cancelled and must respect the market's
        tick size and minimum size (400 naming them). A buy needing more pUSD than the
        wallet holds (fees included) answers 402 `insufficient_balance` before anything
        is sent. Expired, reused or mismatched previews answer 400 saying which. The
        order record is stored before the order is sent; the venue's refusal answers
        200 with status `rejected` and its `reason`. While the venue restarts or is in a
        restricted mode (post-only, cancel-only, disabled, throttled), or when its answer
        is lost, the order answers 503 `polymarket_unavailable` with `Retry-After` (and
        `reason`, `order_id`): retry with the same Idempotency-Key; it is placed once.
        """
        return orders.placed_view(orders.place_order(access.current_principal().user,
                                                     source="manual", **body))


@blp.route("/orders")
class OpenOrders(MethodView):
    @access.requires("read:markets")
    @blp.response(200, OpenOrderSchema(many=True))
    @blp.errors(401, 403, 429, 503)
    def get(self):
        """The caller's orders resting on the book, newest first (bare array)."""
        return order_reads.open_orders(access.current_principal().user)

    @access.requires("trade:cancel")
    @idempotent
    @blp.response(200, CancelResultSchema)
    @blp.errors(401, 403, 409, 429, 503)
    def delete(self):
        """Cancel every resting order of the caller's wallet."""
        return order_cancels.cancel_all(access.current_principal().user)


@blp.route("/orders/<string:order_id>")
class OpenOrder(MethodView):
    @access.requires("trade:cancel")
    @idempotent
    @blp.response(200, CancelResultSchema)
    @blp.errors(401, 403, 404, 409, 429, 503)
    def delete(self, order_id: str):
        """Cancel one of the caller's resting orders; 404 for unknown or other users' ids.

        An order that already filled or was cancelled is listed in `not_canceled` with
        the venue's reason.
        """
        return order_cancels.cancel_order(access.current_principal().user, order_id)
