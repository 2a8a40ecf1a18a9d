"""A config's buying paused by the copy engine, and since when (issue 41: a loss or
drawdown stop that cannot value a held position for a minute pauses buys)."""

import peewee
from playhouse.migrate import migrate


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the columns; every existing config buys as before (nothing paused)."""
    migrate(
        migrator.add_column("copy_configs", "buys_paused_reason",
                            peewee.CharField(max_length=40, null=True)),
        migrator.add_column("copy_configs", "buys_paused_at", peewee.DateTimeField(null=True)),
    )
