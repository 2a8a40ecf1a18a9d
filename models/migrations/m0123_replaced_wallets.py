"""replaced_wallets (issue 44): a generated wallet a connected account replaced while it
was unused, kept whole (its sealed key bound to its old place) so funds that reach its
address afterwards can still be recovered."""

import uuid

import peewee


class User(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "users"


class ReplacedWallet(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    address = peewee.CharField(max_length=42, unique=True)
    funder_address = peewee.CharField(max_length=42, null=True)
    private_key_sealed = peewee.TextField()
    key_id = peewee.CharField(max_length=64, index=True)
    created_at = peewee.DateTimeField()
    replaced_at = peewee.DateTimeField()

    class Meta:
        table_name = "replaced_wallets"


def apply(database: peewee.Database, migrator: object) -> None:
    """Create replaced_wallets."""
    with database.bind_ctx([User, ReplacedWallet]):
        database.create_tables([ReplacedWallet])
