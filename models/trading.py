"""Trading records: order previews, outgoing venue orders, the live fills ledger, the paper book.

Money and sizes are ``DecimalTextField`` (exact text: sizes have 6 decimals on chain but
prices like 0.123456789 from averages must not be rounded by the database).

Life of a live order (services/trading/orders.py, order_reconcile.py, order_states.py):

    OrderPreview (single use, expires) ──redeem──► Order(pending) + Trade(pending)
        written in one transaction BEFORE the signed order leaves the process;
        Order.order_hash is the signed order's EIP-712 hash = the venue's order id.
    POST /order ─► live (resting) │ matched │ delayed (fills later) │ rejected │
                   unknown (timeout: reconcile by hash)
    each fill ─► OrderFill: MATCHED → MINED → CONFIRMED, or RETRYING → FAILED (reversed)
"""

from __future__ import annotations

import peewee

from models.base import BaseModel, DecimalTextField, UTCDateTimeField, utcnow
from models.user import User

# Order.status: our record of the venue order.
ORDER_PENDING = "pending"      # written, not yet (known to be) at the venue
ORDER_LIVE = "live"            # resting on the book
ORDER_MATCHED = "matched"      # done with fills (FOK/FAK matched, or GTC fully filled)
ORDER_CANCELLED = "cancelled"  # cancelled or killed (may carry a partial fill)
ORDER_REJECTED = "rejected"    # the venue refused it (reason in .error)
ORDER_FAILED = "failed"        # never reached the venue (reconciled as absent)
ORDER_DELAYED = "delayed"      # taken by the venue, waiting out a market's matching delay
ORDER_OPEN = (ORDER_PENDING, ORDER_LIVE, ORDER_DELAYED)
# Monotonic transitions: each status, with the statuses it may be written over. A final
# status is never replaced by another (a matched or cancelled one may only gain details,
# such as the fee an answer prices after a reconciliation stored the fills); a write whose
# predecessor is gone lost a race and changes nothing.
ORDER_PREDECESSORS: dict[str, tuple[str, ...]] = {
    ORDER_DELAYED: (ORDER_PENDING, ORDER_DELAYED),
    ORDER_LIVE: (ORDER_PENDING, ORDER_DELAYED, ORDER_LIVE),
    ORDER_MATCHED: (ORDER_PENDING, ORDER_DELAYED, ORDER_LIVE, ORDER_MATCHED),
    ORDER_CANCELLED: (ORDER_PENDING, ORDER_DELAYED, ORDER_LIVE, ORDER_CANCELLED),
    ORDER_REJECTED: (ORDER_PENDING,),
    ORDER_FAILED: (ORDER_PENDING,),
}

# Trade.status (SPEC): pending -> filled | cancelled | failed.
TRADE_PENDING, TRADE_FILLED, TRADE_CANCELLED, TRADE_FAILED = (
    "pending", "filled", "cancelled", "failed")


class OrderPreview(BaseModel):
    """A quoted order a user may place once before it expires (its id is the preview_id)."""

    user = peewee.ForeignKeyField(User, backref="order_previews", on_delete="CASCADE")
    token_id = peewee.CharField(max_length=100)
    side = peewee.CharField(max_length=4)         # buy | sell
    order_type = peewee.CharField(max_length=6)   # market | limit
    size = DecimalTextField()
    price = DecimalTextField(null=True)
    summary = peewee.TextField()                  # JSON of the quote shown to the user
    created_at = UTCDateTimeField(default=utcnow)
    expires_at = UTCDateTimeField(index=True)
    used_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "order_previews"


class Order(BaseModel):
    """One signed order we send (or sent) to the venue; written before it leaves the process."""

    user = peewee.ForeignKeyField(User, backref="orders", on_delete="CASCADE")
    maker_address = peewee.CharField(max_length=42)
    token_id = peewee.CharField(max_length=100, index=True)
    market_slug = peewee.CharField(max_length=255, default="")
    side = peewee.CharField(max_length=4)             # buy | sell
    order_type = peewee.CharField(max_length=6)       # market | limit
    time_in_force = peewee.CharField(max_length=3)    # GTC | FOK | FAK
    size = DecimalTextField()                         # shares asked for
    price = DecimalTextField()                        # limit, or protective limit of a market order
    budget = DecimalTextField(null=True)              # pUSD a market BUY may spend
    order_hash = peewee.CharField(max_length=66, unique=True)  # = the venue's order id
    signed_body = peewee.TextField()                  # the exact POST /order JSON
    status = peewee.CharField(max_length=10, default=ORDER_PENDING, index=True)
    filled_size = DecimalTextField(default=0)
    filled_value = DecimalTextField(default=0)        # pUSD paid or received, fees excluded
    fee = DecimalTextField(default=0)
    error = peewee.TextField(null=True)
    source = peewee.CharField(max_length=8, default="manual")  # manual | copy | sell
    config_id = peewee.UUIDField(null=True, index=True)
    target_trade_id = peewee.CharField(max_length=200, null=True)
    detected_at = UTCDateTimeField(null=True)
    preview = peewee.ForeignKeyField(OrderPreview, null=True, unique=True,
                                     on_delete="SET NULL")
    created_at = UTCDateTimeField(default=utcnow)
    submitted_at = UTCDateTimeField(null=True)
    acknowledged_at = UTCDateTimeField(null=True)
    # Stage timings (monotonic clock): planning, signing and recording until sent; sent
    # until the venue answered; the market's taker delay when the venue held the order.
    placement_ms = peewee.IntegerField(null=True)
    ack_ms = peewee.IntegerField(null=True)
    taker_delay_ms = peewee.IntegerField(null=True)
    # Closed unanswered at ORDER_RESOLVE_DEADLINE_SECONDS: followed for late fills a while.
    deadline_closed_at = UTCDateTimeField(null=True, index=True)
    updated_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "orders"
        indexes = ((("user", "status"), False),)


class Trade(BaseModel):
    """The user-facing execution of one order: the live fills ledger (SPEC Trade)."""

    user = peewee.ForeignKeyField(User, backref="trades", on_delete="CASCADE")
    order = peewee.ForeignKeyField(Order, backref="trades", unique=True, null=True,
                                   on_delete="SET NULL")
    token_id = peewee.CharField(max_length=100, index=True)
    market_slug = peewee.CharField(max_length=255, default="")
    side = peewee.CharField(max_length=4)
    requested_size = DecimalTextField()
    price = DecimalTextField()
    filled_size = DecimalTextField(default=0)
    filled_value = DecimalTextField(default=0)
    fee = DecimalTextField(default=0)
    latency_ms = peewee.IntegerField(null=True)
    status = peewee.CharField(max_length=10, default=TRADE_PENDING, index=True)
    config_id = peewee.UUIDField(null=True, index=True)
    created_at = UTCDateTimeField(default=utcnow, index=True)
    filled_at = UTCDateTimeField(null=True, index=True)
    # The venue's settlement of the fills (services/trading/order_fills.py): None before any fill,
    # then matched | mined | retrying, and finally confirmed | failed.
    settlement = peewee.CharField(max_length=10, null=True, index=True)
    failed_size = DecimalTextField(default=0)         # shares whose venue trade FAILED
    settled_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "trades"
        indexes = ((("user", "created_at"), False),)


class PaperTrade(BaseModel):
    """A simulated fill priced by walking the live book (never sent to the venue)."""

    user = peewee.ForeignKeyField(User, backref="paper_trades", on_delete="CASCADE")
    token_id = peewee.CharField(max_length=100, index=True)
    market_slug = peewee.CharField(max_length=255, default="")
    side = peewee.CharField(max_length=4)
    requested_size = DecimalTextField()
    price = DecimalTextField()                 # the limit used (or best price when none)
    filled_size = DecimalTextField(default=0)
    filled_value = DecimalTextField(default=0)
    fee = DecimalTextField(default=0)
    latency_ms = peewee.IntegerField(null=True)
    status = peewee.CharField(max_length=10)   # filled | failed
    reason = peewee.TextField(null=True)
    config_id = peewee.UUIDField(null=True, index=True)
    created_at = UTCDateTimeField(default=utcnow, index=True)
    filled_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "paper_trades"
        indexes = ((("user", "created_at"), False),)


class PaperPosition(BaseModel):
    """The paper book's holding of one token (average-cost basis, fees included)."""

    user = peewee.ForeignKeyField(User, backref="paper_positions", on_delete="CASCADE")
    token_id = peewee.CharField(max_length=100)
    market_slug = peewee.CharField(max_length=255, default="")
    size = DecimalTextField(default=0)
    cost_basis = DecimalTextField(default=0)
    realized_pnl = DecimalTextField(default=0)
    fees_paid = DecimalTextField(default=0)
    updated_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "paper_positions"
        indexes = ((("user", "token_id"), True),)


class OrderFill(BaseModel):
    """One venue trade of one of our orders, with its settlement status (MATCHED … FAILED)."""

    order = peewee.ForeignKeyField(Order, backref="fills", on_delete="CASCADE")
    venue_trade_id = peewee.CharField(max_length=100)
    status = peewee.CharField(max_length=10)
    shares = DecimalTextField()
    value = DecimalTextField()                        # pUSD, fees excluded
    fee = DecimalTextField(default=0)                 # pUSD the venue charged for this fill
    created_at = UTCDateTimeField(default=utcnow)
    updated_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "order_fills"
        indexes = ((("order", "venue_trade_id"), True),)


TABLES = [OrderPreview, Order, Trade, PaperTrade, PaperPosition, OrderFill]
