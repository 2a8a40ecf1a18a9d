"""Copy trading: configs, previews, target cursors, copy intents, config positions."""

import uuid

import peewee


class User(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "users"


class CopyConfig(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    target_address = peewee.CharField(max_length=42, index=True)
    target_name = peewee.CharField(max_length=120, default="")
    size_multiplier = peewee.TextField()
    max_position_usdc = peewee.TextField()
    price_deviation_bps = peewee.IntegerField()
    blocked_categories = peewee.TextField(default="[]")
    take_profit_bps = peewee.IntegerField(null=True)
    stop_loss_bps = peewee.IntegerField(null=True)
    is_active = peewee.BooleanField(default=False, index=True)
    paper_trading = peewee.BooleanField(default=True)
    version = peewee.IntegerField(default=1)
    last_error = peewee.TextField(null=True)
    last_error_at = peewee.DateTimeField(null=True)
    started_at = peewee.DateTimeField(null=True)
    stopped_at = peewee.DateTimeField(null=True)
    created_at = peewee.DateTimeField()
    updated_at = peewee.DateTimeField()
    deleted_at = peewee.DateTimeField(null=True, index=True)

    class Meta:
        table_name = "copy_configs"


class ConfigPreview(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    fields = peewee.TextField()
    summary = peewee.TextField()
    created_at = peewee.DateTimeField()
    expires_at = peewee.DateTimeField()
    consumed_at = peewee.DateTimeField(null=True)
    config_id = peewee.UUIDField(null=True)

    class Meta:
        table_name = "config_previews"


class TargetCursor(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    target_address = peewee.CharField(max_length=42, unique=True)
    last_timestamp = peewee.BigIntegerField()
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "target_cursors"


class CopyIntent(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    config = peewee.ForeignKeyField(CopyConfig, on_delete="CASCADE")
    user_id = peewee.UUIDField(index=True)
    kind = peewee.CharField(max_length=16, default="mirror")
    target_trade_key = peewee.CharField(max_length=255)
    target_address = peewee.CharField(max_length=42)
    target_side = peewee.CharField(max_length=4, null=True)
    target_size = peewee.TextField(null=True)
    target_price = peewee.TextField(null=True)
    target_timestamp = peewee.BigIntegerField(null=True)
    target_tx_hash = peewee.CharField(max_length=80, null=True)
    token_id = peewee.CharField(max_length=100)
    condition_id = peewee.CharField(max_length=80, default="")
    outcome = peewee.CharField(max_length=200, default="")
    outcome_index = peewee.IntegerField(null=True)
    market_slug = peewee.CharField(max_length=255, default="")
    paper = peewee.BooleanField(default=False)
    status = peewee.CharField(max_length=16, index=True)
    reason = peewee.CharField(max_length=40, null=True)
    detail = peewee.TextField(default="")
    side = peewee.CharField(max_length=4, null=True)
    size = peewee.TextField(null=True)
    price = peewee.TextField(null=True)
    usdc = peewee.TextField(null=True)
    order_id = peewee.CharField(max_length=80, null=True, index=True)
    trade_id = peewee.UUIDField(null=True)
    filled_size = peewee.TextField(null=True)
    filled_price = peewee.TextField(null=True)
    fee = peewee.TextField(null=True)
    seen_at = peewee.DateTimeField()
    sent_at = peewee.DateTimeField(null=True)
    settled_at = peewee.DateTimeField(null=True)
    latency_ms = peewee.IntegerField(null=True)
    detection_delay_ms = peewee.IntegerField(null=True)
    worker = peewee.CharField(max_length=120, default="")
    created_at = peewee.DateTimeField(index=True)

    class Meta:
        table_name = "copy_intents"
        indexes = (
            (("config", "target_trade_key"), True),
            (("config", "created_at"), False),
        )


class CopyPosition(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    config = peewee.ForeignKeyField(CopyConfig, on_delete="CASCADE")
    paper = peewee.BooleanField(default=False)
    token_id = peewee.CharField(max_length=100)
    condition_id = peewee.CharField(max_length=80, default="")
    market_slug = peewee.CharField(max_length=255, default="")
    outcome = peewee.CharField(max_length=200, default="")
    shares = peewee.TextField(default="0")
    cost_usdc = peewee.TextField(default="0")
    realized_pnl = peewee.TextField(default="0")
    opened = peewee.IntegerField(default=0)
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "copy_positions"
        indexes = ((("config", "paper", "token_id"), True),)


TABLES = [CopyConfig, ConfigPreview, TargetCursor, CopyIntent, CopyPosition]


def apply(database: peewee.Database, migrator: object) -> None:
    """Create the copy-trading tables."""
    with database.bind_ctx([User, *TABLES]):
        database.create_tables(TABLES)
