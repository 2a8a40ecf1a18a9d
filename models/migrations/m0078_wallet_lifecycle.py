"""One lifecycle for money leaving a relayer-operated wallet (issue 26): wraps and the
onboarding's approvals store their signed batch before it leaves, as withdrawals and claims
do (m0068, m0069); every batch keeps the chain hash once the relayer ran it; wraps take the
shared states (signed, broadcast, ambiguous), and their one-in-flight index covers them."""

import peewee
from playhouse.migrate import migrate

INDEX = "collateral_wraps_one_in_flight"
IN_FLIGHT = ("queued", "signed", "broadcast", "ambiguous")


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the batch columns, rename the wraps' states, rebuild their index."""
    migrate(
        migrator.add_column("withdrawals", "relayer_transaction_hash",
                            peewee.CharField(max_length=66, null=True)),
        migrator.add_column("claims", "relayer_transaction_hash",
                            peewee.CharField(max_length=66, null=True)),
        migrator.add_column("collateral_wraps", "nonce", peewee.BigIntegerField(null=True)),
        migrator.add_column("collateral_wraps", "deadline", peewee.BigIntegerField(null=True)),
        migrator.add_column("collateral_wraps", "payload", peewee.TextField(null=True)),
        migrator.add_column("collateral_wraps", "transaction_hash",
                            peewee.CharField(max_length=66, null=True)),
        migrator.add_column("account_onboarding", "approvals_nonce",
                            peewee.BigIntegerField(null=True)),
        migrator.add_column("account_onboarding", "approvals_deadline",
                            peewee.BigIntegerField(null=True)),
        migrator.add_column("account_onboarding", "approvals_payload",
                            peewee.TextField(null=True)),
        migrator.add_column("account_onboarding", "approvals_transaction_hash",
                            peewee.CharField(max_length=66, null=True)),
    )
    database.execute_sql(f"DROP INDEX IF EXISTS {INDEX}")
    # a wrap interrupted while submitting kept no bytes to follow: what its old job did
    database.execute_sql("UPDATE collateral_wraps SET status = 'failed', error = "
                         "'Interrupted between submitting and recording; check the wallet''s "
                         "balances before wrapping again.' WHERE status = 'submitting'")
    database.execute_sql("UPDATE collateral_wraps SET status = 'broadcast' "
                         "WHERE status = 'submitted'")
    quoted = ", ".join(f"'{status}'" for status in IN_FLIGHT)
    database.execute_sql(f"CREATE UNIQUE INDEX IF NOT EXISTS {INDEX} ON collateral_wraps "
                         f"(wallet_id) WHERE status IN ({quoted})")
