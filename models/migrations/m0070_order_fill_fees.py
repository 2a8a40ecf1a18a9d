"""The fee the venue charged for each fill (order_fills.fee), read from its trade records, so a
fill found later (after a delayed answer, by reconciliation) carries its real fee."""

import peewee
from playhouse.migrate import migrate


def apply(database: peewee.Database, migrator: object) -> None:
    """Add order_fills.fee (existing rows: 0, as they were counted until now)."""
    migrate(migrator.add_column("order_fills", "fee", peewee.TextField(default="0")))
