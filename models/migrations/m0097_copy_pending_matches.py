"""A config may copy a target's match seen pending on chain, before its block (issue 30)."""

import peewee
from playhouse.migrate import migrate


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the opt-in; existing configs wait for confirmed fills, as before."""
    migrate(migrator.add_column("copy_configs", "copy_pending_matches",
                                peewee.BooleanField(default=False)))
