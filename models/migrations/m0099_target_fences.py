"""Fencing across partitions (issue 31): each target lease's newest fencing token
(``target_fences``), and the token every copy intent was recorded under."""

import uuid

import peewee
from playhouse.migrate import migrate


class TargetFence(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    target_address = peewee.CharField(max_length=42, unique=True)
    token = peewee.BigIntegerField()
    updated_at = peewee.DateTimeField()

    class Meta:
        table_name = "target_fences"


def apply(database: peewee.Database, migrator: object) -> None:
    """Create ``target_fences`` and add ``copy_intents.fence``."""
    with database.bind_ctx([TargetFence]):
        database.create_tables([TargetFence])
    migrate(migrator.add_column("copy_intents", "fence", peewee.BigIntegerField(null=True)))
