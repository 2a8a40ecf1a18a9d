"""Copy rules a follower can trust with real money (issue 27): sizing modes, trade limits,
the odds band, sides and direction, budgets, loss and drawdown stops, the failure breaker,
start modes, market filters on copy_configs; the per-user exposure limit on users."""

import peewee
from playhouse.migrate import migrate


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the columns; existing configs keep today's behaviour (every new rule off)."""
    text = {"null": True}
    migrate(
        migrator.add_column("copy_configs", "sizing_mode",
                            peewee.CharField(max_length=16, default="multiplier")),
        *(migrator.add_column("copy_configs", name, peewee.TextField(**text)) for name in (
            "fixed_usdc", "min_trade_usdc", "max_trade_usdc", "min_target_trade_usdc",
            "min_price", "max_price", "daily_budget_usdc", "total_budget_usdc",
            "loss_stop_usdc", "pnl_peak_usdc", "skip_if_ends_within_hours",
            "exit_hours_before_end", "breaker_last_error")),
        migrator.add_column("copy_configs", "round_up_to_min",
                            peewee.BooleanField(default=False)),
        migrator.add_column("copy_configs", "copy_buys", peewee.BooleanField(default=True)),
        migrator.add_column("copy_configs", "copy_sells", peewee.BooleanField(default=True)),
        migrator.add_column("copy_configs", "direction",
                            peewee.CharField(max_length=8, default="mirror")),
        migrator.add_column("copy_configs", "max_drawdown_bps", peewee.IntegerField(null=True)),
        migrator.add_column("copy_configs", "close_positions_on_stop",
                            peewee.BooleanField(default=False)),
        migrator.add_column("copy_configs", "stopped_reason",
                            peewee.CharField(max_length=40, null=True)),
        migrator.add_column("copy_configs", "max_consecutive_failures",
                            peewee.IntegerField(default=5)),
        migrator.add_column("copy_configs", "breaker_state",
                            peewee.CharField(max_length=8, default="closed")),
        migrator.add_column("copy_configs", "breaker_failures", peewee.IntegerField(default=0)),
        migrator.add_column("copy_configs", "breaker_trips", peewee.IntegerField(default=0)),
        migrator.add_column("copy_configs", "breaker_retry_at",
                            peewee.DateTimeField(null=True)),
        migrator.add_column("copy_configs", "breaker_last_reason",
                            peewee.CharField(max_length=40, null=True)),
        migrator.add_column("copy_configs", "start_mode",
                            peewee.CharField(max_length=24, default="new_trades_only")),
        migrator.add_column("copy_configs", "include_keywords", peewee.TextField(default="[]")),
        migrator.add_column("copy_configs", "exclude_keywords", peewee.TextField(default="[]")),
        migrator.add_column("users", "max_total_exposure_usdc", peewee.TextField(null=True)),
    )
