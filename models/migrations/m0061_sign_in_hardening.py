"""Sign-in hardening: code purpose and browser binding, budgets, revoked sessions,
``users.sessions_valid_after``."""

import uuid

import peewee
from playhouse.migrate import migrate


class User(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "users"


class SignInEvent(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    kind = peewee.CharField(max_length=16)
    email = peewee.CharField(max_length=320)
    ip = peewee.CharField(max_length=64)
    created_at = peewee.DateTimeField()

    class Meta:
        table_name = "sign_in_events"
        indexes = ((("email", "kind", "created_at"), False), (("ip", "kind", "created_at"), False))


class RevokedSession(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    jti = peewee.CharField(max_length=64, unique=True)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    expires_at = peewee.DateTimeField(index=True)

    class Meta:
        table_name = "revoked_sessions"


def apply(database: peewee.Database, migrator: object) -> None:
    """Add the columns and create sign_in_events and revoked_sessions."""
    migrate(
        migrator.add_column("login_codes", "purpose",  # type: ignore[attr-defined]
                            peewee.CharField(max_length=16, default="sign_in")),
        migrator.add_column("login_codes", "browser_hash",  # type: ignore[attr-defined]
                            peewee.CharField(max_length=64, null=True)),
        migrator.add_column("users", "sessions_valid_after",  # type: ignore[attr-defined]
                            peewee.DateTimeField(null=True)),
    )
    with database.bind_ctx([User, SignInEvent, RevokedSession]):
        database.create_tables([SignInEvent, RevokedSession])
