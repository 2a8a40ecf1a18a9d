"""Approvals through the one wallet lifecycle (issue 26): ``wallet_approvals``, one row per
approvals batch (a relayer wallet) or per approval (a plain EOA's transaction). An
onboarding's approvals batch stored before this (its ``approvals_*`` columns) and not known
to have run moves into it, so the lifecycle resends or follows it as it is (its calls are
left empty: a fresh signature grants every required approval again, which is harmless)."""

import uuid
from datetime import UTC, datetime

import peewee


class TradingWallet(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "trading_wallets"


class WalletTransaction(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "wallet_transactions"


class AccountOnboarding(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    wallet = peewee.ForeignKeyField(TradingWallet, on_delete="CASCADE")
    approvals_nonce = peewee.BigIntegerField(null=True)
    approvals_deadline = peewee.BigIntegerField(null=True)
    approvals_payload = peewee.TextField(null=True)
    approvals_transaction_id = peewee.CharField(max_length=128, null=True)
    approvals_transaction_hash = peewee.CharField(max_length=66, null=True)

    class Meta:
        table_name = "account_onboarding"


class WalletApproval(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    wallet = peewee.ForeignKeyField(TradingWallet, on_delete="CASCADE")
    calls = peewee.TextField()
    status = peewee.CharField(max_length=16, default="queued", index=True)
    transaction = peewee.ForeignKeyField(WalletTransaction, null=True, on_delete="SET NULL")
    relayer_nonce = peewee.BigIntegerField(null=True)
    relayer_deadline = peewee.BigIntegerField(null=True)
    relayer_payload = peewee.TextField(null=True)
    relayer_transaction_id = peewee.CharField(max_length=128, null=True)
    relayer_transaction_hash = peewee.CharField(max_length=66, null=True)
    error = peewee.TextField(null=True)
    created_at = peewee.DateTimeField()
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "wallet_approvals"


def apply(database: peewee.Database, migrator: object) -> None:
    """Create ``wallet_approvals``; move onboardings' unsettled approvals batches into it."""
    models = [TradingWallet, WalletTransaction, AccountOnboarding, WalletApproval]
    with database.bind_ctx(models):
        database.create_tables([WalletApproval])
        now = datetime.now(UTC).replace(tzinfo=None)  # stored as naive UTC
        stored = AccountOnboarding.select().where(
            AccountOnboarding.approvals_payload.is_null(False)
            & AccountOnboarding.approvals_transaction_hash.is_null())
        for row in stored:
            WalletApproval.create(
                wallet=row.wallet_id, calls="[]",
                status="broadcast" if row.approvals_transaction_id else "signed",
                relayer_nonce=row.approvals_nonce, relayer_deadline=row.approvals_deadline,
                relayer_payload=row.approvals_payload,
                relayer_transaction_id=row.approvals_transaction_id,
                created_at=now, updated_at=now)
