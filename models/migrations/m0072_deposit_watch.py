"""Deposits seen without a manual step (issue 16): ``deposit_watches`` keeps, per trading
wallet, the maker's pUSD the watcher last saw on chain (a change is a deposit: the CLOB is
told to re-read it), and collateral_wraps gets a partial unique index so one wallet never
has two wraps in flight (the watcher and a user's request, or two watchers, racing)."""

import uuid

import peewee

INDEX = "collateral_wraps_one_in_flight"
IN_FLIGHT = ("queued", "submitting", "submitted")


class TradingWallet(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "trading_wallets"


class DepositWatch(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    wallet = peewee.ForeignKeyField(TradingWallet, unique=True, on_delete="CASCADE")
    pusd_seen = peewee.TextField(null=True)
    usdce_seen = peewee.TextField(null=True)
    changed_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "deposit_watches"


def apply(database: peewee.Database, migrator: object) -> None:
    """Create deposit_watches; fail all but the newest in-flight wrap of a wallet (none
    should exist), then index in-flight wraps by wallet, uniquely."""
    with database.bind_ctx([TradingWallet, DepositWatch]):
        database.create_tables([DepositWatch])
    marks = ", ".join(database.param for _ in IN_FLIGHT)
    rows = database.execute_sql(
        f"SELECT id, wallet_id FROM collateral_wraps WHERE status IN ({marks}) "
        "ORDER BY created_at DESC", IN_FLIGHT).fetchall()
    seen: set[object] = set()
    for wrap_id, wallet_id in rows:
        if wallet_id in seen:
            database.execute_sql(
                "UPDATE collateral_wraps SET status = 'failed', error = "
                "'Superseded: another wrap of this wallet was in flight.' WHERE id = "
                + database.param, (wrap_id,))
        seen.add(wallet_id)
    quoted = ", ".join(f"'{status}'" for status in IN_FLIGHT)
    database.execute_sql(f"CREATE UNIQUE INDEX IF NOT EXISTS {INDEX} ON collateral_wraps "
                         f"(wallet_id) WHERE status IN ({quoted})")
