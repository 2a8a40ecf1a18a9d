"""Market schemas: translations and search (the discovery shapes join them later)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate


class MarketTranslationSchema(Schema):
    """A market's title and description in one locale."""

    slug = fields.String(required=True)
    locale = fields.String(required=True)
    title = fields.String(required=True)
    description = fields.String(required=True)


class LocaleInfo(Schema):
    locale = fields.String(required=True, metadata={"description": "The locale served."})
    requested_locale = fields.String(required=True)
    fallback = fields.Boolean(required=True, metadata={
        "description": "True when the requested locale has no translations and English "
                       "is served instead."})


class TranslationsArgs(Schema):
    slugs = fields.String(load_default="", metadata={
        "description": "Comma-separated market slugs. Unknown slugs are left out."})
    locale = fields.String(load_default=None, metadata={"description": "e.g. es, pt-BR"})


class TranslationsResponse(LocaleInfo):
    translations = fields.List(fields.Nested(MarketTranslationSchema), required=True)


class TranslationSearchArgs(Schema):
    q = fields.String(required=True, validate=validate.Length(min=1), metadata={
        "description": "Text to find in titles and descriptions (case- and accent-insensitive)."})
    locale = fields.String(load_default=None)
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=1000))


class TranslationSearchResponse(LocaleInfo):
    results = fields.List(fields.Nested(MarketTranslationSchema), required=True, metadata={
        "description": "Title matches first (prefix before substring), then description "
                       "matches."})
