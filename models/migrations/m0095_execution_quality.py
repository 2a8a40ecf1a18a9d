"""Execution quality per copy (issue 30 item 1): each copy intent's detection source,
slippage against the target's fill and per-stage delays; each order's placement,
acknowledgement and taker delay (manual orders show their stages too)."""

import peewee
from playhouse.migrate import migrate

INTENT_STAGES = ("decision_ms", "placement_ms", "ack_ms", "settlement_ms", "taker_delay_ms")
ORDER_STAGES = ("placement_ms", "ack_ms", "taker_delay_ms")


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the columns, all nullable: older rows simply have no measurement."""
    migrate(
        migrator.add_column("copy_intents", "detection_source",
                            peewee.CharField(max_length=8, null=True)),
        migrator.add_column("copy_intents", "slippage_bps", peewee.TextField(null=True)),
        *(migrator.add_column("copy_intents", name, peewee.IntegerField(null=True))
          for name in INTENT_STAGES),
        *(migrator.add_column("orders", name, peewee.IntegerField(null=True))
          for name in ORDER_STAGES),
    )
