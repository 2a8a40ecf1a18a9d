"""USDC.e wrapped into pUSD through the onramp, from a deposit wallet (a relayer WALLET
batch): one durable row per request, written before anything leaves, with the relayer's
transaction id stored as soon as it answers."""

import uuid

import peewee


class TradingWallet(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "trading_wallets"


class CollateralWrap(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    wallet = peewee.ForeignKeyField(TradingWallet, on_delete="CASCADE")
    amount = peewee.TextField()
    status = peewee.CharField(max_length=16, default="queued", index=True)
    submitted_at = peewee.DateTimeField(null=True)
    transaction_id = peewee.CharField(max_length=128, null=True)
    error = peewee.TextField(null=True)
    created_at = peewee.DateTimeField()
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "collateral_wraps"


def apply(database: peewee.Database, migrator: object) -> None:
    """Create collateral_wraps."""
    with database.bind_ctx([TradingWallet, CollateralWrap]):
        database.create_tables([CollateralWrap])
