"""Trading accounts the venue accepts (issue 16): the account kind of each trading wallet, a
connected account's relayer key, and the onboarding record of each wallet.

Existing wallets are plain EOAs (``eoa``); new ones are deposit wallets. ``account_onboarding``
holds one row per wallet: where onboarding stands, the relayer transaction ids (written
before they are waited on) and the last failure, so a crash or a retry resumes, never
resubmits blindly.
"""

import uuid

import peewee
from playhouse.migrate import migrate


class TradingWallet(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "trading_wallets"


class AccountOnboarding(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    wallet = peewee.ForeignKeyField(TradingWallet, unique=True, on_delete="CASCADE")
    status = peewee.CharField(max_length=16, default="pending")
    step = peewee.CharField(max_length=24, default="deploy")
    deploy_submitted_at = peewee.DateTimeField(null=True)
    deploy_transaction_id = peewee.CharField(max_length=128, null=True)
    approvals_submitted_at = peewee.DateTimeField(null=True)
    approvals_transaction_id = peewee.CharField(max_length=128, null=True)
    error = peewee.TextField(null=True)
    lease_owner = peewee.CharField(max_length=64, null=True)
    lease_until = peewee.DateTimeField(null=True)
    attempts = peewee.IntegerField(default=0)
    created_at = peewee.DateTimeField()
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "account_onboarding"


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the account columns (existing wallets are EOAs) and the onboarding table."""
    migrate(
        migrator.add_column("trading_wallets", "account_kind",
                            peewee.CharField(max_length=16, default="eoa")),
        migrator.add_column("trading_wallets", "session_signer",
                            peewee.BooleanField(default=False)),
        migrator.add_column("trading_wallets", "relayer_api_key_sealed",
                            peewee.TextField(null=True)),
        migrator.add_column("trading_wallets", "relayer_api_key_address",
                            peewee.CharField(max_length=42, null=True)),
    )
    with database.bind_ctx([TradingWallet, AccountOnboarding]):
        database.create_tables([AccountOnboarding])
