"""Entries and exits the way careful followers set them (issue 45): the entry policy, sell
modes, max open positions, a market cooldown and price deviation bands on copy_configs, and
each copy position's buys since it was last flat (what the entry policy counts)."""

import peewee
from playhouse.migrate import migrate

# The columns that are never null, added with their default in one statement each (the
# migrator adds such a column null, fills it, then sets NOT NULL, which SQLite does by
# rebuilding the table: that would drop copy_configs' revision triggers, m0101).
NOT_NULL = [
    "ALTER TABLE copy_configs ADD COLUMN entry_policy VARCHAR(16) NOT NULL"
    " DEFAULT 'every_add'",
    "ALTER TABLE copy_configs ADD COLUMN sell_mode VARCHAR(16) NOT NULL DEFAULT 'mirror'",
    "ALTER TABLE copy_configs ADD COLUMN price_deviation_bands TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE copy_positions ADD COLUMN entries INTEGER NOT NULL DEFAULT 0",
]


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the columns; existing configs keep today's behaviour (every add copied, sells
    mirrored, no bands: the single price deviation)."""
    for statement in NOT_NULL:
        database.execute_sql(statement)
    migrate(
        migrator.add_column("copy_configs", "max_adds_count", peewee.IntegerField(null=True)),
        migrator.add_column("copy_configs", "max_open_positions",
                            peewee.IntegerField(null=True)),
        migrator.add_column("copy_configs", "market_cooldown_seconds",
                            peewee.IntegerField(null=True)),
    )
