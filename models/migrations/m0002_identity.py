"""Login codes and API keys."""

import uuid

import peewee


class User(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "users"


class LoginCode(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    email = peewee.CharField(max_length=320, index=True)
    code_hash = peewee.CharField(max_length=64)
    link_hash = peewee.CharField(max_length=64, unique=True)
    attempts = peewee.IntegerField(default=0)
    created_at = peewee.DateTimeField()
    expires_at = peewee.DateTimeField()
    consumed_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "login_codes"


class ApiKey(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    name = peewee.CharField(max_length=80)
    prefix = peewee.CharField(max_length=32)
    key_hash = peewee.CharField(max_length=64, unique=True)
    scopes = peewee.TextField()
    created_at = peewee.DateTimeField()
    last_used_at = peewee.DateTimeField(null=True)
    expires_at = peewee.DateTimeField(null=True)
    revoked_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "api_keys"
        indexes = ((("user", "created_at"), False),)


def apply(database: peewee.Database, migrator: object) -> None:
    """Create login_codes and api_keys."""
    with database.bind_ctx([User, LoginCode, ApiKey]):
        database.create_tables([LoginCode, ApiKey])
