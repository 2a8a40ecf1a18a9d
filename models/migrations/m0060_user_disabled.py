"""users.disabled_at: the operator can disable an account (``copytrade users disable``)."""

import peewee
from playhouse.migrate import migrate


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the nullable users.disabled_at column (existing accounts stay enabled)."""
    migrate(migrator.add_column("users", "disabled_at", peewee.DateTimeField(null=True)))
