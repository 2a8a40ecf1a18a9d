"""OAuth clients, approvals, authorization codes and tokens."""

import uuid

import peewee


class User(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)

    class Meta:
        table_name = "users"


class OAuthClient(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    client_id = peewee.CharField(max_length=2048, unique=True)
    kind = peewee.CharField(max_length=16)
    client_secret_hash = peewee.CharField(max_length=64, null=True)
    client_name = peewee.CharField(max_length=200, default="")
    client_uri = peewee.TextField(null=True)
    logo_uri = peewee.TextField(null=True)
    redirect_uris = peewee.TextField()
    grant_types = peewee.TextField()
    response_types = peewee.TextField()
    scope = peewee.TextField(null=True)
    token_endpoint_auth_method = peewee.CharField(max_length=32)
    created_at = peewee.DateTimeField()
    metadata_fetched_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "oauth_clients"


class Approval(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    client = peewee.ForeignKeyField(OAuthClient, on_delete="CASCADE")
    scope = peewee.TextField()
    created_at = peewee.DateTimeField()
    updated_at = peewee.DateTimeField()
    revoked_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "oauth_approvals"
        indexes = ((("user", "client"), True),)


class AuthorizationCode(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    code_hash = peewee.CharField(max_length=64, unique=True)
    client = peewee.ForeignKeyField(OAuthClient, on_delete="CASCADE")
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    approval = peewee.ForeignKeyField(Approval, on_delete="CASCADE")
    redirect_uri = peewee.TextField()
    scope = peewee.TextField()
    resource = peewee.TextField()
    code_challenge = peewee.CharField(max_length=128)
    code_challenge_method = peewee.CharField(max_length=8)
    family_id = peewee.UUIDField(index=True)
    created_at = peewee.DateTimeField()
    expires_at = peewee.DateTimeField()
    used_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "oauth_authorization_codes"


class OAuthToken(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    access_token_hash = peewee.CharField(max_length=64, unique=True)
    refresh_token_hash = peewee.CharField(max_length=64, unique=True, null=True)
    client = peewee.ForeignKeyField(OAuthClient, on_delete="CASCADE")
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    approval = peewee.ForeignKeyField(Approval, on_delete="CASCADE")
    scope = peewee.TextField()
    resource = peewee.TextField()
    family_id = peewee.UUIDField(index=True)
    created_at = peewee.DateTimeField()
    access_expires_at = peewee.DateTimeField()
    refresh_expires_at = peewee.DateTimeField(null=True)
    rotated_at = peewee.DateTimeField(null=True)
    revoked_at = peewee.DateTimeField(null=True)

    class Meta:
        table_name = "oauth_tokens"


TABLES = [OAuthClient, Approval, AuthorizationCode, OAuthToken]


def apply(database: peewee.Database, migrator: object) -> None:
    """Create the four OAuth tables."""
    with database.bind_ctx([User, *TABLES]):
        database.create_tables(TABLES)
