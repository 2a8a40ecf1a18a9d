"""orders.deadline_closed_at: when an order was closed unanswered at the resolve deadline
(ORDER_RESOLVE_DEADLINE_SECONDS), so the late-fill sweep finds such orders by a column and an
index rather than by words in their error text."""

import uuid

import peewee
from playhouse.migrate import migrate


class Order(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    status = peewee.CharField(max_length=10)
    error = peewee.TextField(null=True)
    deadline_closed_at = peewee.DateTimeField(null=True)
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "orders"


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the column and its index; orders closed so far are found by their old error text."""
    migrate(
        migrator.add_column("orders", "deadline_closed_at", peewee.DateTimeField(null=True)),
        migrator.add_index("orders", ("deadline_closed_at",), False),
    )
    backfill(database)


def backfill(database: peewee.Database) -> None:
    """Date the orders closed at the deadline before the column existed (their error text
    was the only record of it) at their last update."""
    with database.bind_ctx([Order]):
        Order.update(deadline_closed_at=Order.updated_at).where(
            Order.error.contains("(ORDER_RESOLVE_DEADLINE_SECONDS)"),
            Order.status.in_(("failed", "cancelled")),
            Order.deadline_closed_at.is_null()).execute()
