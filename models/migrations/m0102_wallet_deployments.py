"""A deposit wallet's deployment through the one wallet lifecycle (issue 26):
``wallet_deployments``, one row per ``WALLET-CREATE`` attempt, its body stored before it
leaves and the relayer's id as soon as it answers (services/wallets/wallet_batches.py).

An onboarding's deployment the relayer answered (``deploy_transaction_id``) moves into it:
still at the deploy step it is followed to its end (``broadcast``), past it it ran
(``confirmed``, so the status still shows its id). One sent without its answer stored
(``deploy_submitted_at`` alone) does not move: the next run asks ``/deployed`` before it
sends, and a second ``WALLET-CREATE`` for the same owner can deploy nothing more (the
wallet's address is fixed by its owner; the relayer refuses one while another is in
flight or once the wallet exists). Then the onboarding's own send columns go (the
approvals' moved into ``wallet_approvals`` in m0100); ``approvals_transaction_id`` stays,
the status shows it."""

import uuid
from datetime import UTC, datetime

import peewee
from playhouse.migrate import migrate


class TradingWallet(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "trading_wallets"


class AccountOnboarding(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    wallet = peewee.ForeignKeyField(TradingWallet, on_delete="CASCADE")
    step = peewee.CharField(max_length=24)
    deploy_transaction_id = peewee.CharField(max_length=128, null=True)

    class Meta:
        table_name = "account_onboarding"


class WalletDeployment(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    relayer_nonce = peewee.BigIntegerField(null=True)
    relayer_deadline = peewee.BigIntegerField(null=True)
    relayer_payload = peewee.TextField(null=True)
    relayer_transaction_id = peewee.CharField(max_length=128, null=True)
    relayer_transaction_hash = peewee.CharField(max_length=66, null=True)
    wallet = peewee.ForeignKeyField(TradingWallet, on_delete="CASCADE")
    status = peewee.CharField(max_length=16, default="queued", index=True)
    error = peewee.TextField(null=True)
    created_at = peewee.DateTimeField()
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "wallet_deployments"


DROPPED = ("deploy_submitted_at", "deploy_transaction_id", "approvals_submitted_at",
           "approvals_nonce", "approvals_deadline", "approvals_payload",
           "approvals_transaction_hash")


def apply(database: peewee.Database, migrator: object) -> None:
    """Create ``wallet_deployments``, move the onboardings' answered deployments into it,
    drop the onboarding's send columns."""
    move(database)
    migrate(*(migrator.drop_column("account_onboarding", column) for column in DROPPED))


def move(database: peewee.Database) -> None:
    """Create the table (when missing) and move each onboarding's answered deployment not
    moved yet."""
    with database.bind_ctx([TradingWallet, AccountOnboarding, WalletDeployment]):
        database.create_tables([WalletDeployment])
        now = datetime.now(UTC).replace(tzinfo=None)  # stored as naive UTC
        moved = WalletDeployment.select(WalletDeployment.relayer_transaction_id).where(
            WalletDeployment.relayer_transaction_id.is_null(False))
        answered = AccountOnboarding.select().where(
            AccountOnboarding.deploy_transaction_id.is_null(False)
            & AccountOnboarding.deploy_transaction_id.not_in(moved))
        for row in answered:
            WalletDeployment.create(
                wallet=row.wallet_id, relayer_transaction_id=row.deploy_transaction_id,
                status="broadcast" if row.step == "deploy" else "confirmed",
                created_at=now, updated_at=now)
