"""The screened leaderboard (issue 46): one row per trader the venue ranks, replayed in the
background at our measured delay, with its numbers, its flags and the fills it rests on."""

import uuid

import peewee


class TraderScreening(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    address = peewee.CharField(max_length=42, unique=True)
    name = peewee.CharField(max_length=200, default="")
    ranks = peewee.TextField(default="{}")
    ranked_at = peewee.DateTimeField()
    copier_pnl_p50 = peewee.BigIntegerField(null=True)
    copier_pnl_p95 = peewee.BigIntegerField(null=True)
    trader_pnl = peewee.BigIntegerField(null=True)
    kept_share_bps = peewee.IntegerField(null=True)
    win_rate_bps = peewee.IntegerField(null=True)
    trades = peewee.IntegerField(default=0)
    volume = peewee.BigIntegerField(default=0)
    avg_hold_seconds = peewee.IntegerField(null=True)
    drawdown = peewee.BigIntegerField(null=True)
    markets = peewee.IntegerField(default=0)
    categories = peewee.TextField(default="[]")
    last_active_at = peewee.DateTimeField(null=True)
    fill_count = peewee.IntegerField(default=0)
    fills = peewee.TextField(default="[]")
    cursor = peewee.BigIntegerField(null=True)
    report = peewee.TextField(null=True)
    flags = peewee.TextField(default="{}")
    error = peewee.TextField(null=True)
    updated_at = peewee.DateTimeField(null=True)
    checked_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "trader_screenings"
        indexes = ((("checked_at",), False),)


def apply(database: peewee.Database, migrator: object) -> None:
    """Create trader_screenings."""
    with database.bind_ctx([TraderScreening]):
        database.create_tables([TraderScreening])
