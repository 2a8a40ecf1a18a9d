"""Withdrawals from a deposit wallet go through the relayer (issue 16): the signed WALLET
batch (its nonce, deadline and body) is stored before it is submitted, and the relayer's
transaction id as soon as it answers, so a crash in between resends the same bytes (which
the wallet's nonce lets run at most once) rather than signing again."""

import peewee
from playhouse.migrate import migrate


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the relayer columns to withdrawals."""
    migrate(
        migrator.add_column("withdrawals", "relayer_nonce", peewee.BigIntegerField(null=True)),
        migrator.add_column("withdrawals", "relayer_deadline",
                            peewee.BigIntegerField(null=True)),
        migrator.add_column("withdrawals", "relayer_payload", peewee.TextField(null=True)),
        migrator.add_column("withdrawals", "relayer_transaction_id",
                            peewee.CharField(max_length=128, null=True)),
    )
