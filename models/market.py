"""The market catalogue synced from Gamma, its outcome tokens, and imported translations."""

from __future__ import annotations

import peewee

from models.base import BaseModel, UTCDateTimeField, utcnow


class Market(BaseModel):
    """A venue market as last synced from Gamma (English is the venue's language)."""

    venue_id = peewee.CharField(max_length=64, unique=True)
    slug = peewee.CharField(max_length=255, unique=True)
    condition_id = peewee.CharField(max_length=80, index=True)
    title = peewee.TextField()
    description = peewee.TextField(default="")
    category = peewee.CharField(max_length=80, default="", index=True)
    outcomes = peewee.TextField(default="[]")  # JSON list of labels, by outcome index
    active = peewee.BooleanField(default=True)
    closed = peewee.BooleanField(default=False)
    neg_risk = peewee.BooleanField(default=False)
    # Accent- and case-folded title and description, for search on any database.
    search_title = peewee.TextField(default="")
    search_body = peewee.TextField(default="")
    synced_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "markets"


class MarketToken(BaseModel):
    """An outcome token of a market (the CLOB's asset id)."""

    token_id = peewee.CharField(max_length=100, unique=True)
    market = peewee.ForeignKeyField(Market, backref="tokens", on_delete="CASCADE")
    outcome = peewee.CharField(max_length=200)
    outcome_index = peewee.IntegerField()

    class Meta:
        table_name = "market_tokens"


class MarketTranslation(BaseModel):
    """A market's title and description in one locale, imported by an operator."""

    slug = peewee.CharField(max_length=255)
    locale = peewee.CharField(max_length=16)
    title = peewee.TextField()
    description = peewee.TextField(default="")
    search_title = peewee.TextField(default="")
    search_body = peewee.TextField(default="")
    imported_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "market_translations"
        indexes = ((("slug", "locale"), True),)
