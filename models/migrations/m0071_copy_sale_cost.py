"""copy_intents.sold_cost: the cost basis a copy's sale took out of the config's position,
so a sale whose venue trade FAILED is reversed exactly (shares, cost and realized PnL)."""

import peewee
from playhouse.migrate import migrate


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the column (existing sales: unknown, reversed at the position's average cost)."""
    migrate(migrator.add_column("copy_intents", "sold_cost", peewee.TextField(null=True)))
