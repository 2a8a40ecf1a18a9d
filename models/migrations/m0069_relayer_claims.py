"""Claims from a deposit wallet go through the relayer (issue 16): the signed WALLET batch
that redeems through the collateral adapters is stored before it is submitted, and the
relayer's transaction id as soon as it answers (the same rule as withdrawals, m0068)."""

import peewee
from playhouse.migrate import migrate


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the relayer columns to claims."""
    migrate(
        migrator.add_column("claims", "relayer_nonce", peewee.BigIntegerField(null=True)),
        migrator.add_column("claims", "relayer_deadline", peewee.BigIntegerField(null=True)),
        migrator.add_column("claims", "relayer_payload", peewee.TextField(null=True)),
        migrator.add_column("claims", "relayer_transaction_id",
                            peewee.CharField(max_length=128, null=True)),
    )
