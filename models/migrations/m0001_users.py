"""Users table."""

import uuid

import peewee


class User(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    email = peewee.CharField(max_length=320, unique=True)
    tier = peewee.CharField(max_length=16, default="free")
    created_at = peewee.DateTimeField()

    class Meta:
        table_name = "users"


def apply(database: peewee.Database, migrator: object) -> None:
    """Create the users table."""
    with database.bind_ctx([User]):
        database.create_tables([User])
