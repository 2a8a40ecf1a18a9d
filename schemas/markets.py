"""Market schemas: translations and search (the discovery shapes join them later)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from schemas.fields import DecimalString


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


class OutcomeSchema(Schema):
    outcome = fields.String(required=True)
    token_id = fields.String(required=True)
    price = DecimalString(allow_none=True)


class MarketSummarySchema(Schema):
    """A market as found by search."""

    slug = fields.String(required=True)
    title = fields.String(required=True)
    category = fields.String(required=True)
    condition_id = fields.String(required=True)
    status = fields.String(required=True, metadata={
        "description": "open, paused (not accepting orders), closed or resolved"})
    outcomes = fields.List(fields.Nested(OutcomeSchema), required=True)
    volume = DecimalString(allow_none=True)
    liquidity = DecimalString(allow_none=True)
    end_date = fields.DateTime(allow_none=True)


class MarketDetailsSchema(MarketSummarySchema):
    """A market with its trading rules and prices."""

    description = fields.String(required=True)
    neg_risk = fields.Boolean(required=True)
    accepting_orders = fields.Boolean(required=True)
    tick_size = DecimalString(allow_none=True)
    min_order_size = DecimalString(allow_none=True)
    best_bid = DecimalString(allow_none=True)
    best_ask = DecimalString(allow_none=True)
    last_trade_price = DecimalString(allow_none=True)
    volume_24h = DecimalString(allow_none=True)
    fees_enabled = fields.Boolean(required=True)
    taker_fee_rate = DecimalString(allow_none=True)


class DepthLevelSchema(Schema):
    price = DecimalString(required=True)
    size = DecimalString(required=True)
    cumulative_size = DecimalString(required=True)


class LiquidityBandSchema(Schema):
    within_cents = fields.Integer(required=True)
    bid_usdc = DecimalString(allow_none=True)
    ask_usdc = DecimalString(allow_none=True)


class MarketDepthSchema(Schema):
    """An order book summarised for sizing an order."""

    token_id = fields.String(required=True)
    best_bid = DecimalString(allow_none=True)
    best_ask = DecimalString(allow_none=True)
    midpoint = DecimalString(allow_none=True)
    spread = DecimalString(allow_none=True)
    bids = fields.List(fields.Nested(DepthLevelSchema), required=True)
    asks = fields.List(fields.Nested(DepthLevelSchema), required=True)
    liquidity = fields.List(fields.Nested(LiquidityBandSchema), required=True, metadata={
        "description": "pUSD resting within 1, 2 and 5 cents of the midpoint, per side"})
    tick_size = DecimalString(allow_none=True)
    min_order_size = DecimalString(allow_none=True)


class PricePointSchema(Schema):
    t = fields.Integer(required=True, metadata={"description": "Unix seconds"})
    price = DecimalString(required=True)


class PriceHistorySchema(Schema):
    token_id = fields.String(required=True)
    interval = fields.String(required=True)
    points = fields.List(fields.Nested(PricePointSchema), required=True)
    open = DecimalString(allow_none=True)
    latest = DecimalString(allow_none=True)
    high = DecimalString(allow_none=True)
    low = DecimalString(allow_none=True)
    change = DecimalString(allow_none=True)
    change_pct = DecimalString(allow_none=True)


class TraderSchema(Schema):
    """A leaderboard entry: a wallet one could copy."""

    rank = fields.Integer(required=True)
    address = fields.String(required=True)
    name = fields.String(required=True)
    pnl = DecimalString(required=True)
    volume = DecimalString(required=True)
    verified = fields.Boolean(required=True)
