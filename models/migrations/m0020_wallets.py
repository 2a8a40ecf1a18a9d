"""Trading wallets, their signed transactions, withdrawals and claims."""

import uuid

import peewee


class User(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "users"


class TradingWallet(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, unique=True, on_delete="CASCADE")
    address = peewee.CharField(max_length=42, unique=True)
    private_key_sealed = peewee.TextField()
    key_id = peewee.CharField(max_length=64, index=True)
    signature_type = peewee.IntegerField(default=0)
    funder_address = peewee.CharField(max_length=42, null=True)
    venue_api_key_sealed = peewee.TextField(null=True)
    venue_api_secret_sealed = peewee.TextField(null=True)
    venue_api_passphrase_sealed = peewee.TextField(null=True)
    next_nonce = peewee.BigIntegerField(default=0)
    nonce_lease_owner = peewee.CharField(max_length=64, null=True)
    nonce_lease_until = peewee.DateTimeField(null=True)
    created_at = peewee.DateTimeField()

    class Meta:
        table_name = "trading_wallets"


class WalletTransaction(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    wallet = peewee.ForeignKeyField(TradingWallet, on_delete="CASCADE")
    kind = peewee.CharField(max_length=16)
    chain_id = peewee.IntegerField()
    nonce = peewee.BigIntegerField(null=True)
    tx_hash = peewee.CharField(max_length=66, unique=True)
    raw_tx = peewee.TextField()
    to_address = peewee.CharField(max_length=42)
    max_cost_wei = peewee.TextField(default="0")
    status = peewee.CharField(max_length=16, default="signed", index=True)
    block_number = peewee.BigIntegerField(null=True)
    gas_used = peewee.BigIntegerField(null=True)
    gas_fee = peewee.TextField(null=True)
    error = peewee.TextField(null=True)
    created_at = peewee.DateTimeField()
    broadcast_at = peewee.DateTimeField(null=True)
    settled_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "wallet_transactions"
        indexes = ((("wallet", "status"), False),)


class Withdrawal(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    wallet = peewee.ForeignKeyField(TradingWallet, on_delete="CASCADE")
    token = peewee.CharField(max_length=8)
    token_address = peewee.CharField(max_length=42, null=True)
    to_address = peewee.CharField(max_length=42)
    amount = peewee.TextField()
    status = peewee.CharField(max_length=16, default="queued", index=True)
    transaction = peewee.ForeignKeyField(WalletTransaction, null=True, on_delete="SET NULL",
                                         backref="withdrawals")
    error = peewee.TextField(null=True)
    created_at = peewee.DateTimeField()
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "withdrawals"


class Claim(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    wallet = peewee.ForeignKeyField(TradingWallet, on_delete="CASCADE")
    condition_id = peewee.CharField(max_length=66, index=True)
    neg_risk = peewee.BooleanField(default=False)
    market_slug = peewee.CharField(max_length=255, default="")
    token_ids = peewee.TextField()
    amounts = peewee.TextField()
    collateral = peewee.CharField(max_length=42)
    expected_payout = peewee.TextField()
    status = peewee.CharField(max_length=16, default="queued", index=True)
    approval_transaction = peewee.ForeignKeyField(WalletTransaction, null=True,
                                                  on_delete="SET NULL", backref="approved_claims")
    transaction = peewee.ForeignKeyField(WalletTransaction, null=True, on_delete="SET NULL",
                                         backref="claims")
    error = peewee.TextField(null=True)
    created_at = peewee.DateTimeField()
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "claims"


TABLES = [TradingWallet, WalletTransaction, Withdrawal, Claim]


def apply(database: peewee.Database, migrator: object) -> None:
    """Create trading_wallets, wallet_transactions, withdrawals and claims."""
    with database.bind_ctx([User, *TABLES]):
        database.create_tables(TABLES)
