"""A copy's reservation against its user's exposure cap and its config's budgets (issue 41):
``copy_intents.reserved_usdc``, the most a buy may cost (taker fee included), written with
the intent. It counts while the intent is open (pending, sent) and no longer once it is
final: what filled is then in the position and the budgets' spending, the rest is free
(services/copying/reservations.py). Existing intents have none; an open one without it
counts its ``usdc``."""

import peewee
from playhouse.migrate import migrate


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the column (NULL for intents written before)."""
    migrate(migrator.add_column("copy_intents", "reserved_usdc", peewee.TextField(null=True)))
