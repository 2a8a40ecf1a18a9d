"""claims.paid: what a confirmed claim's redemption paid, read from its receipt (a claim
of tokens already redeemed pays nothing, whatever it expected)."""

import peewee
from playhouse.migrate import migrate


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the nullable claims.paid column (claims confirmed before it keep their expected
    payout)."""
    migrate(migrator.add_column("claims", "paid", peewee.TextField(null=True)))
