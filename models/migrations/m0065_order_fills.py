"""Fills as the venue settles them: order_fills (one row per venue trade of an order) and
trades.settlement / failed_size / settled_at (MATCHED → MINED → CONFIRMED, or FAILED)."""

import uuid

import peewee
from playhouse.migrate import migrate


class Order(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "orders"


class OrderFill(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    order = peewee.ForeignKeyField(Order, on_delete="CASCADE")
    venue_trade_id = peewee.CharField(max_length=100)
    status = peewee.CharField(max_length=10)
    shares = peewee.TextField()
    value = peewee.TextField()
    created_at = peewee.DateTimeField()
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "order_fills"
        indexes = ((("order", "venue_trade_id"), True),)


def apply(database: peewee.Database, migrator: object) -> None:
    """Create order_fills; add the settlement columns to trades (existing rows: unknown)."""
    with database.bind_ctx([Order, OrderFill]):
        database.create_tables([OrderFill])
    migrate(
        migrator.add_column("trades", "settlement", peewee.CharField(max_length=10, null=True)),
        migrator.add_column("trades", "failed_size", peewee.TextField(default="0")),
        migrator.add_column("trades", "settled_at", peewee.DateTimeField(null=True)),
        migrator.add_index("trades", ("settlement",), False),
    )
