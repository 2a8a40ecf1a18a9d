"""Trading schemas: order requests, previews, responses, open orders, positions, trades, stats.

Shared by REST and MCP. Money and sizes are DecimalStrings; ``side`` and ``order_type``
are accepted in any case and answered lowercase.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from marshmallow import (
    Schema,
    ValidationError,
    fields,
    pre_dump,
    pre_load,
    validate,
    validates_schema,
)

from schemas.common import PageArgsSchema
from schemas.fields import DecimalString

SIDE = validate.OneOf(["buy", "sell"])
ORDER_TYPE = validate.OneOf(["market", "limit"])


class PlaceOrderRequestSchema(Schema):
    """PlaceOrderRequest: ``size`` in shares (at most 2 decimals), or a market buy's ``amount``."""

    token_id = fields.String(required=True, validate=validate.Length(min=1, max=100),
                             metadata={"description": "The outcome token (CLOB asset id)."})
    side = fields.String(required=True, validate=SIDE, metadata={"enum": ["buy", "sell"]})
    size = DecimalString(load_default=None, allow_none=True, positive=True, metadata={
        "description": "Shares to buy or sell, at most 2 decimals (the venue's share step). "
                       "Required unless `amount` is given."})
    amount = DecimalString(load_default=None, allow_none=True, positive=True, metadata={
        "description": "Market buys only, instead of `size`: the pUSD to spend, taker fee "
                       "included, in whole cents and at least 1. The order buys as many "
                       "shares as that buys from the book, and never spends more."})
    price = DecimalString(load_default=None, allow_none=True, metadata={
        "description": "Limit price, required for limit orders: strictly between 0 and 1 "
                       "and on the market's tick grid. Ignored for market orders, whose "
                       "protective limit comes from the book."})
    order_type = fields.String(required=True, validate=ORDER_TYPE,
                               metadata={"enum": ["market", "limit"]})
    post_only = fields.Boolean(load_default=False, metadata={
        "description": "Limit orders only: the order must rest on the book. The venue "
                       "refuses it (`rejected`, or 400 when it would match against the "
                       "book as priced) instead of letting it match at once. During the "
                       "venue's post-only window after a restart only post-only orders "
                       "are accepted."})

    @pre_load
    def lowercase(self, data: Any, **kwargs: Any) -> Any:
        """Accept BUY/Market as well as buy/market."""
        if isinstance(data, dict):
            data = dict(data)
            for name in ("side", "order_type"):
                if isinstance(data.get(name), str):
                    data[name] = data[name].strip().lower()
        return data

    @validates_schema
    def price_rules(self, data: dict[str, Any], **kwargs: Any) -> None:
        """Limit orders need a price in (0, 1); only they can be post-only.

        Size versus amount is checked where every surface checks it (order_plan)."""
        if data.get("post_only") and data.get("order_type") != "limit":
            raise ValidationError("Only limit orders can be post-only.", field_name="post_only")
        price = data.get("price")
        if data.get("order_type") == "limit":
            if price is None:
                raise ValidationError("Required for limit orders.", field_name="price")
            if not Decimal(0) < price < Decimal(1):
                raise ValidationError("Must be between 0 and 1 (exclusive).",
                                      field_name="price")


class PlaceOrderSchema(PlaceOrderRequestSchema):
    """PlaceOrderRequest plus the preview it was quoted by."""

    preview_id = fields.UUID(load_default=None, allow_none=True, metadata={
        "description": "Required: the id answered by POST /api/markets/order/preview for "
                       "exactly this order, unexpired and unused."})


class OrderPreviewSchema(Schema):
    """The exact order that would be sent, and what it is expected to do."""

    preview_id = fields.UUID(required=True)
    expires_at = fields.DateTime(required=True, metadata={
        "description": "Previews last 3 minutes and can place one order."})
    token_id = fields.String(required=True)
    market_slug = fields.String(required=True)
    market_title = fields.String(required=True)
    outcome = fields.String(required=True)
    side = fields.String(required=True)
    order_type = fields.String(required=True)
    time_in_force = fields.String(required=True, metadata={
        "description": "GTC for limit orders; FOK for market orders."})
    post_only = fields.Boolean(required=True, metadata={
        "description": "Whether the order is post-only (rests, never matches at once)."})
    size = DecimalString(required=True, metadata={
        "description": "Shares asked for; for an order sized by `amount`, the shares that "
                       "amount is expected to buy."})
    amount = DecimalString(required=True, allow_none=True, metadata={
        "description": "The pUSD a market buy sized by amount spends at most, fee included; "
                       "null for an order sized in shares."})
    price = DecimalString(required=True, metadata={
        "description": "The limit price, or a market order's protective limit (worst price "
                       "it accepts)."})
    expected_price = DecimalString(required=True, metadata={
        "description": "Average price expected from walking the live book (the limit for "
                       "limit orders)."})
    estimated_shares = DecimalString(required=True)
    estimated_cost = DecimalString(required=True, metadata={
        "description": "pUSD paid (buy) or received (sell), fees excluded."})
    fee = DecimalString(required=True, metadata={
        "description": "Taker fee of the part that would match now."})
    midpoint = DecimalString(allow_none=True)
    best_bid = DecimalString(allow_none=True)
    best_ask = DecimalString(allow_none=True)
    slippage_bps = DecimalString(allow_none=True, metadata={
        "description": "Expected price versus the midpoint, in basis points (positive: worse)."})
    tick_size = DecimalString(required=True)
    min_order_size = DecimalString(required=True)
    confirmation = fields.String(required=True, metadata={
        "description": "One line to show a person before they confirm."})


class StagesSchema(Schema):
    """Each stage's delay in milliseconds (null where not measured, or not applicable)."""

    detection_ms = fields.Integer(allow_none=True, metadata={
        "description": "The target's trade time to our seeing it (whole seconds of the "
                       "venue's timestamp, so coarse)."})
    decision_ms = fields.Integer(allow_none=True, metadata={
        "description": "Seen to decided: quotes read, the config's rules applied."})
    placement_ms = fields.Integer(allow_none=True, metadata={
        "description": "Decided (a manual order: received) to the order leaving: planning, "
                       "signing, the durable record."})
    ack_ms = fields.Integer(allow_none=True, metadata={
        "description": "Order sent to the venue's answer."})
    settlement_ms = fields.Integer(allow_none=True, metadata={
        "description": "The venue's answer to the fill being recorded (an order the venue "
                       "held: until the fill was seen)."})
    taker_delay_ms = fields.Integer(allow_none=True, metadata={
        "description": "The market's taker delay, when the venue held the order for it."})


class ExecutionSchema(Schema):
    """Execution quality of one trade: where the copied fill was detected, the target's
    price and ours, slippage, the fee, and each stage's delay."""

    source = fields.String(allow_none=True, metadata={
        "description": "What detected the target's fill: feed (RTDS), poll (Data API), "
                       "chain or pending (on chain). Null for a manual order."})
    target_price = DecimalString(allow_none=True, metadata={
        "description": "The target's fill price."})
    price = DecimalString(allow_none=True, metadata={
        "description": "Our average fill price (fees excluded)."})
    slippage_bps = DecimalString(allow_none=True, metadata={
        "description": "Our price against the target's in basis points of the target's "
                       "price, signed: positive is worse for us (a buy paid more, a sale "
                       "got less). An inverse copy is measured against 1 - the target's "
                       "price (the other outcome)."})
    fee = DecimalString(allow_none=True)
    stages = fields.Nested(StagesSchema, required=True)


# PlaceOrderResponse's words for an order's stored status (models.trading's vocabulary),
# the one place they are translated: ``placed_status``.
PLACED_WORDS = {"pending": "accepted", "delayed": "accepted", "live": "accepted",
                "matched": "filled", "cancelled": "rejected", "rejected": "rejected",
                "failed": "rejected"}


def placed_status(status: str, filled_size: Decimal) -> str:
    """An order's stored status in the API's words: ``filled`` once shares moved (a
    cancelled order with a partial fill too), ``accepted`` while open, else ``rejected``."""
    word = PLACED_WORDS[status]
    return "filled" if word == "rejected" and status == "cancelled" and filled_size > 0 \
        else word


class _PlacedWords(Schema):
    """Answers an order placed as its record stands, its status in the API's words."""

    @pre_dump
    def _words(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {**data, "status": placed_status(data["status"], data["filled_size"])}


class PlaceOrderResponseSchema(_PlacedWords):
    """PlaceOrderResponse."""

    order_id = fields.String(required=True, metadata={
        "description": "The venue's order id (the signed order's hash)."})
    status = fields.String(required=True, validate=validate.OneOf(
        ["accepted", "filled", "rejected"]), metadata={
        "description": "`filled`: shares were bought or sold (a market order, or a limit "
                       "order that matched at once); `accepted`: resting on the book, waiting "
                       "out a market's matching delay, or the venue's answer was lost and "
                       "the order is being reconciled; "
                       "`rejected`: refused by the venue (see `reason`)."})
    filled_size = DecimalString(required=True)
    average_price = DecimalString(required=True)
    reason = fields.String(allow_none=True, metadata={
        "description": "Why the order was rejected (the venue's own message)."})
    trade_id = fields.UUID(allow_none=True, metadata={"description": "The Trade recording it."})
    execution = fields.Nested(ExecutionSchema, allow_none=True, metadata={
        "description": "The order's stages: placement (received to sent), the venue's "
                       "acknowledgement and, when the venue held it, the market's taker "
                       "delay. Null when the answer was lost (reconciled later)."})


class OpenOrderSchema(Schema):
    """Order: an open order on the book."""

    order_id = fields.String(required=True)
    token_id = fields.String(required=True)
    side = fields.String(required=True)
    price = DecimalString(required=True)
    size = DecimalString(required=True)
    filled_size = DecimalString(required=True)
    status = fields.String(required=True)
    order_type = fields.String(required=True)
    created_at = fields.DateTime(required=True)


class CancelResultSchema(Schema):
    """What the venue cancelled."""

    canceled = fields.List(fields.String(), required=True)
    not_canceled = fields.Dict(keys=fields.String(), values=fields.String(), required=True,
                               metadata={"description": "order id -> reason"})


class PositionSchema(Schema):
    """Position."""

    token_id = fields.String(required=True)
    market_slug = fields.String(required=True)
    market_title = fields.String(required=True)
    outcome = fields.String(required=True)
    size = DecimalString(required=True)
    cost_basis = DecimalString(required=True)
    current_price = DecimalString(required=True)
    current_value = DecimalString(required=True)
    unrealized_pnl = DecimalString(required=True)
    realized_pnl = DecimalString(required=True)
    resolved = fields.Boolean(required=True)
    status = fields.String(required=True, metadata={"description": (
        "The venue's position status as it wrote it (Data API v2): `OPEN`, `REDEEMABLE`, "
        "`REDEEMABLE_LOST` (resolved against this outcome: nothing to claim), `MERGEABLE` "
        "(both outcomes held: see `merge_value`), `CLOSED`; any other text is a status "
        "this version does not know, shown as it is.")})
    claimable_value = DecimalString(required=True, allow_none=True)
    merge_value = DecimalString(required=True, allow_none=True, metadata={"description": (
        "For a `MERGEABLE` position: the pUSD merging the complete sets held would return "
        "(1 a set: the smaller of the two outcomes' sizes); null otherwise.")})


class PositionsArgsSchema(Schema):
    active_only = fields.Boolean(load_default=True, metadata={
        "description": "true: only positions with shares above 0."})


class SellPositionsRequestSchema(Schema):
    token_ids = fields.List(fields.String(validate=validate.Length(min=1, max=100)),
                            required=True, validate=validate.Length(min=1, max=100))


class SellResultSchema(_PlacedWords):
    token_id = fields.String(required=True)
    order_id = fields.String(allow_none=True)
    status = fields.String(required=True)
    filled_size = DecimalString(required=True)
    average_price = DecimalString(required=True)
    reason = fields.String(allow_none=True)
    trade_id = fields.UUID(allow_none=True)


class SellPositionsResponseSchema(Schema):
    results = fields.List(fields.Nested(SellResultSchema), required=True)


class TradeSchema(Schema):
    """Trade."""

    id = fields.UUID(required=True)
    token_id = fields.String(required=True)
    market_slug = fields.String(required=True)
    side = fields.String(required=True)
    size = DecimalString(required=True)
    price = DecimalString(required=True)
    filled_price = DecimalString(required=True)
    usdc_value = DecimalString(required=True)
    fee = DecimalString(required=True)
    latency_ms = fields.Integer(allow_none=True)
    status = fields.String(required=True, validate=validate.OneOf(
        ["pending", "filled", "cancelled", "failed"]))
    created_at = fields.DateTime(required=True)
    filled_at = fields.DateTime(allow_none=True)
    config_id = fields.UUID(allow_none=True)
    order_id = fields.String(allow_none=True)
    settlement = fields.String(allow_none=True, validate=validate.OneOf(
        ["matched", "mined", "retrying", "confirmed", "failed"]), metadata={
        "description": "The venue's settlement of the fills on chain: `matched` → `mined` → "
                       "`confirmed`, or `retrying` → `failed` (a failed fill never happened "
                       "and is taken back out of size, value, positions and PnL); null "
                       "before anything filled."})
    failed_size = DecimalString(required=True, metadata={
        "description": "Shares whose venue trade failed and were reversed (0 when none)."})
    settled_at = fields.DateTime(allow_none=True, metadata={
        "description": "When the settlement became final (confirmed or failed)."})
    execution = fields.Nested(ExecutionSchema, allow_none=True, metadata={
        "description": "Execution quality: a copy's detection source, target price, "
                       "slippage and stage delays; a manual order's placement, "
                       "acknowledgement and taker delay. Null when nothing was measured."})


class PaperTradeSchema(TradeSchema):
    """A simulated fill (Trade shape; status filled or failed)."""

    reason = fields.String(allow_none=True)

    class Meta:
        exclude = ("order_id", "settlement", "failed_size", "settled_at")


class TradesArgsSchema(PageArgsSchema):
    """``limit``/``offset`` plus an optional ``config_id`` filter."""

    config_id = fields.UUID(load_default=None)


class UserSummarySchema(Schema):
    """UserSummary."""

    user_id = fields.UUID(required=True)
    total_pnl = DecimalString(required=True)
    realized_pnl = DecimalString(required=True)
    trade_count = fields.Integer(required=True)
    fees_paid = DecimalString(required=True)


class LatencyFiguresSchema(Schema):
    count = fields.Integer(required=True)
    p50_ms = fields.Integer(required=True)
    p95_ms = fields.Integer(required=True)
    p99_ms = fields.Integer(required=True)
    max_ms = fields.Integer(required=True)


class LatencyDaySchema(LatencyFiguresSchema):
    date = fields.Date(required=True)


class StageFiguresSchema(Schema):
    """One stage's delays: how many copies measured it, p50, p95 and max (zeros: none)."""

    count = fields.Integer(required=True)
    p50_ms = fields.Integer(required=True)
    p95_ms = fields.Integer(required=True)
    max_ms = fields.Integer(required=True)


class StageSplitSchema(Schema):
    """Each stage of a copy, in the order they happen."""

    detection = fields.Nested(StageFiguresSchema, required=True)
    decision = fields.Nested(StageFiguresSchema, required=True)
    placement = fields.Nested(StageFiguresSchema, required=True)
    ack = fields.Nested(StageFiguresSchema, required=True)
    settlement = fields.Nested(StageFiguresSchema, required=True)
    taker_delay = fields.Nested(StageFiguresSchema, required=True)


class LatencyStatsSchema(LatencyFiguresSchema):
    """Copy latency of the user's live copy trades: detection to venue acknowledgement."""

    days = fields.Integer(required=True)
    since = fields.DateTime(required=True)
    per_day = fields.List(fields.Nested(LatencyDaySchema), required=True, metadata={
        "description": "One entry per UTC day, oldest first, zeros on days without trades."})
    stages = fields.Nested(StageSplitSchema, required=True, metadata={
        "description": "The latency split by stage over the user's copies (live and paper) "
                       "of the same days: detection, decision, placement, venue "
                       "acknowledgement, settlement and taker delay."})
