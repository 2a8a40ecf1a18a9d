"""Shared setups (issue 45): one link per copy config that carries its rules to another user.

Only the SHA-256 of the link's token is stored (``token_hash``, unique): the token itself is
shown once, to its owner, and a lookup by its hash leaks nothing a timing could use.
``show_results`` is the owner's choice to show the config's results with the rules."""

import uuid

import peewee


class CopyConfig(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "copy_configs"


class SharedConfig(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    config = peewee.ForeignKeyField(CopyConfig, unique=True, on_delete="CASCADE")
    token_hash = peewee.CharField(max_length=64, unique=True)
    show_results = peewee.BooleanField(default=False)
    created_at = peewee.DateTimeField()

    class Meta:
        table_name = "shared_configs"


def apply(database: peewee.Database, migrator: object) -> None:
    """Create shared_configs."""
    with database.bind_ctx([CopyConfig, SharedConfig]):
        database.create_tables([SharedConfig])
