"""Market catalogue, outcome tokens and translations."""

import uuid

import peewee


class Market(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    venue_id = peewee.CharField(max_length=64, unique=True)
    slug = peewee.CharField(max_length=255, unique=True)
    condition_id = peewee.CharField(max_length=80, index=True)
    title = peewee.TextField()
    description = peewee.TextField(default="")
    category = peewee.CharField(max_length=80, default="", index=True)
    outcomes = peewee.TextField(default="[]")
    active = peewee.BooleanField(default=True)
    closed = peewee.BooleanField(default=False)
    neg_risk = peewee.BooleanField(default=False)
    search_title = peewee.TextField(default="")
    search_body = peewee.TextField(default="")
    synced_at = peewee.DateTimeField()

    class Meta:
        table_name = "markets"


class MarketToken(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    token_id = peewee.CharField(max_length=100, unique=True)
    market = peewee.ForeignKeyField(Market, on_delete="CASCADE")
    outcome = peewee.CharField(max_length=200)
    outcome_index = peewee.IntegerField()

    class Meta:
        table_name = "market_tokens"


class MarketTranslation(peewee.Model):
    id = peewee.UUIDField(primary_key=True, default=uuid.uuid4)
    slug = peewee.CharField(max_length=255)
    locale = peewee.CharField(max_length=16)
    title = peewee.TextField()
    description = peewee.TextField(default="")
    search_title = peewee.TextField(default="")
    search_body = peewee.TextField(default="")
    imported_at = peewee.DateTimeField()

    class Meta:
        table_name = "market_translations"
        indexes = ((("slug", "locale"), True),)


TABLES = [Market, MarketToken, MarketTranslation]


def apply(database: peewee.Database, migrator: object) -> None:
    """Create the catalogue tables."""
    with database.bind_ctx(TABLES):
        database.create_tables(TABLES)
