"""Trading: order previews, venue orders, the live trades ledger, the paper book."""

import uuid

import peewee


class User(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "users"


class OrderPreview(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    token_id = peewee.CharField(max_length=100)
    side = peewee.CharField(max_length=4)
    order_type = peewee.CharField(max_length=6)
    size = peewee.TextField()
    price = peewee.TextField(null=True)
    summary = peewee.TextField()
    created_at = peewee.DateTimeField()
    expires_at = peewee.DateTimeField(index=True)
    used_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "order_previews"


class Order(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    maker_address = peewee.CharField(max_length=42)
    token_id = peewee.CharField(max_length=100, index=True)
    market_slug = peewee.CharField(max_length=255, default="")
    side = peewee.CharField(max_length=4)
    order_type = peewee.CharField(max_length=6)
    time_in_force = peewee.CharField(max_length=3)
    size = peewee.TextField()
    price = peewee.TextField()
    budget = peewee.TextField(null=True)
    order_hash = peewee.CharField(max_length=66, unique=True)
    signed_body = peewee.TextField()
    status = peewee.CharField(max_length=10, index=True)
    filled_size = peewee.TextField()
    filled_value = peewee.TextField()
    fee = peewee.TextField()
    error = peewee.TextField(null=True)
    source = peewee.CharField(max_length=8)
    config_id = peewee.UUIDField(null=True, index=True)
    target_trade_id = peewee.CharField(max_length=200, null=True)
    detected_at = peewee.DateTimeField(null=True)
    preview = peewee.ForeignKeyField(OrderPreview, null=True, unique=True, on_delete="SET NULL")
    created_at = peewee.DateTimeField()
    submitted_at = peewee.DateTimeField(null=True)
    acknowledged_at = peewee.DateTimeField(null=True)
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "orders"
        indexes = ((("user", "status"), False),)


class Trade(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    order = peewee.ForeignKeyField(Order, unique=True, null=True, on_delete="SET NULL")
    token_id = peewee.CharField(max_length=100, index=True)
    market_slug = peewee.CharField(max_length=255, default="")
    side = peewee.CharField(max_length=4)
    requested_size = peewee.TextField()
    price = peewee.TextField()
    filled_size = peewee.TextField()
    filled_value = peewee.TextField()
    fee = peewee.TextField()
    latency_ms = peewee.IntegerField(null=True)
    status = peewee.CharField(max_length=10, index=True)
    config_id = peewee.UUIDField(null=True, index=True)
    created_at = peewee.DateTimeField(index=True)
    filled_at = peewee.DateTimeField(null=True, index=True)

    class Meta:
        table_name = "trades"
        indexes = ((("user", "created_at"), False),)


class PaperTrade(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    token_id = peewee.CharField(max_length=100, index=True)
    market_slug = peewee.CharField(max_length=255, default="")
    side = peewee.CharField(max_length=4)
    requested_size = peewee.TextField()
    price = peewee.TextField()
    filled_size = peewee.TextField()
    filled_value = peewee.TextField()
    fee = peewee.TextField()
    latency_ms = peewee.IntegerField(null=True)
    status = peewee.CharField(max_length=10)
    reason = peewee.TextField(null=True)
    config_id = peewee.UUIDField(null=True, index=True)
    created_at = peewee.DateTimeField(index=True)
    filled_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "paper_trades"
        indexes = ((("user", "created_at"), False),)


class PaperPosition(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    token_id = peewee.CharField(max_length=100)
    market_slug = peewee.CharField(max_length=255, default="")
    size = peewee.TextField()
    cost_basis = peewee.TextField()
    realized_pnl = peewee.TextField()
    fees_paid = peewee.TextField()
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "paper_positions"
        indexes = ((("user", "token_id"), True),)


TABLES = [OrderPreview, Order, Trade, PaperTrade, PaperPosition]


def apply(database: peewee.Database, migrator: object) -> None:
    """Create the trading tables."""
    with database.bind_ctx([User, *TABLES]):
        database.create_tables(TABLES)
