"""Market schemas: translations and search (the discovery shapes join them later)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from schemas.fields import DecimalString
from schemas.screening import ScreenedArgs, ScreeningSchema


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
    q = fields.String(required=True, validate=validate.Length(min=1, max=100), metadata={
        "description": "Text to find in titles and descriptions (case- and accent-insensitive; "
                       "% and _ are plain characters). At most 100 characters."})
    locale = fields.String(load_default=None)
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=100))


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
    tick_size = DecimalString(allow_none=True, metadata={
        "description": "The price increment orders must respect (prices are shown to it)."})


class MarketDetailsSchema(MarketSummarySchema):
    """A market with its trading rules and prices."""

    description = fields.String(required=True)
    neg_risk = fields.Boolean(required=True)
    accepting_orders = fields.Boolean(required=True)
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
    at = fields.DateTime(required=True, metadata={"description": "ISO 8601, UTC."})
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
    """A leaderboard entry: a wallet one could copy, with its screened replay."""

    rank = fields.Integer(required=True)
    address = fields.String(required=True)
    name = fields.String(required=True)
    pnl = DecimalString(required=True)
    volume = DecimalString(required=True)
    verified = fields.Boolean(required=True)
    screening = fields.Nested(ScreeningSchema, allow_none=True, dump_default=None, metadata={
        "description": "Its replay through the default rules at our measured delay, with its "
                       "flags; null until the background screening has replayed it."})


# Arguments of the discovery services (services/markets/markets.py), shared by every surface.

class MarketSearchArgsSchema(Schema):
    """Find markets by text."""

    query = fields.String(required=True, validate=validate.Length(min=1, max=200), metadata={
        "description": "Words to find in market and event titles, e.g. `bitcoin 100k`."})
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))
    include_closed = fields.Boolean(load_default=False, metadata={
        "description": "Also return closed and resolved markets."})


class MarketLookupArgsSchema(Schema):
    """One market, by slug or by one of its outcome token ids."""

    slug = fields.String(load_default=None, validate=validate.Length(min=1, max=200),
                         metadata={"description": "The market's slug."})
    token_id = fields.String(load_default=None, validate=validate.Length(min=1, max=100),
                             metadata={"description": "An outcome token id of the market."})


class MarketDepthArgsSchema(Schema):
    """The order book of one outcome token."""

    token_id = fields.String(required=True, validate=validate.Length(min=1, max=100))
    levels = fields.Integer(load_default=10, validate=validate.Range(min=1, max=100), metadata={
        "description": "Price levels per side."})


class PriceHistoryArgsSchema(Schema):
    """Price history of one outcome token."""

    token_id = fields.String(required=True, validate=validate.Length(min=1, max=100))
    interval = fields.String(load_default="1d", validate=validate.OneOf(
        ["1h", "6h", "1d", "1w", "1m", "max"]), metadata={
        "description": "How far back: 1h, 6h, 1d, 1w, 1m or max."})
    fidelity = fields.Integer(load_default=None, allow_none=True,
                              validate=validate.Range(min=1, max=1440), metadata={
        "description": "Minutes between points (the venue's default when omitted)."})


class TopTradersArgsSchema(ScreenedArgs):
    """The venue's leaderboard, screened: sorted, filtered and searched."""

    period = fields.String(load_default="WEEK", validate=validate.OneOf(
        ["DAY", "WEEK", "MONTH", "ALL"]))
    order_by = fields.String(load_default="PNL", validate=validate.OneOf(["PNL", "VOL"]))
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=50))
    category = fields.String(load_default=None, allow_none=True, metadata={
        "description": "A venue category (e.g. `sports`); all categories when omitted."})


# REST discovery (GET /api/markets..., /api/traders...): the same services as the MCP tools.

class MarketBrowseArgsSchema(Schema):
    """Search or browse markets, one page at a time."""

    q = fields.String(load_default=None, validate=validate.Length(min=1, max=200), metadata={
        "description": "Words to find in market and event titles; without it, markets by "
                       "24-hour volume.", "example": "bitcoin"})
    category = fields.String(load_default=None, validate=validate.Length(min=1, max=100),
                             metadata={"description": "A venue category, by slug or label "
                                                      "(e.g. `sports`).", "example": "crypto"})
    active = fields.Boolean(load_default=True, metadata={
        "description": "Only markets taking orders (false: closed and resolved ones too)."})
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0))


class OutcomeBookSchema(Schema):
    """One outcome's order book depth (null once the market no longer trades)."""

    outcome = fields.String(required=True)
    token_id = fields.String(required=True)
    depth = fields.Nested(MarketDepthSchema, allow_none=True, required=True)


class MarketPageSchema(MarketDetailsSchema):
    """A market's details with each outcome's order book."""

    books = fields.List(fields.Nested(OutcomeBookSchema), required=True)


class MarketHistoryArgsSchema(Schema):
    """Price history of one outcome of a market."""

    outcome = fields.String(load_default=None, validate=validate.Length(min=1, max=100),
                            metadata={"description": "The outcome's label (e.g. `Yes`); the "
                                                     "first outcome when omitted.",
                                      "example": "Yes"})
    interval = fields.String(load_default="1d", validate=validate.OneOf(
        ["1h", "6h", "1d", "1w", "1m", "max"]), metadata={
        "description": "How far back: 1h, 6h, 1d, 1w, 1m or max.", "example": "1w"})
    fidelity = fields.Integer(load_default=None, allow_none=True,
                              validate=validate.Range(min=1, max=1440), metadata={
        "description": "Minutes between points (the venue's default when omitted)."})


class TradersArgsSchema(ScreenedArgs):
    """The venue's leaderboard, screened: sorted, filtered and searched."""

    period = fields.String(load_default="week", validate=validate.OneOf(
        ["day", "week", "month", "all"]), metadata={"example": "week"})
    order_by = fields.String(load_default="pnl", validate=validate.OneOf(["pnl", "volume"]),
                             metadata={"example": "pnl"})
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=50))
    category = fields.String(load_default=None, allow_none=True, metadata={
        "description": "A venue category (e.g. `sports`); all categories when omitted.",
        "example": "sports"})


class TraderProfileArgsSchema(Schema):
    """One wallet to profile."""

    address = fields.String(required=True, validate=validate.Length(min=1, max=64), metadata={
        "description": "The wallet's address (0x and 40 hex digits).",
        "example": "0x52908400098527886e0f7030069857d2e4169ee7"})


class PnlPointSchema(Schema):
    at = fields.DateTime(required=True)
    pnl = DecimalString(required=True)


class TradedMarketSchema(Schema):
    market_slug = fields.String(required=True)
    title = fields.String(required=True)
    trades = fields.Integer(required=True)
    volume_usdc = DecimalString(required=True)


class TraderTradeSchema(Schema):
    at = fields.DateTime(required=True)
    side = fields.String(required=True)
    outcome = fields.String(required=True)
    token_id = fields.String(required=True)
    market_slug = fields.String(required=True)
    title = fields.String(required=True)
    size = DecimalString(required=True)
    price = DecimalString(required=True)
    usdc = DecimalString(required=True)
    transaction_hash = fields.String(required=True)


class TraderPositionSchema(Schema):
    market_slug = fields.String(required=True)
    title = fields.String(required=True)
    outcome = fields.String(required=True)
    token_id = fields.String(required=True)
    size = DecimalString(required=True)
    average_price = DecimalString(required=True)
    current_price = DecimalString(required=True)
    current_value = DecimalString(required=True)
    pnl_usdc = DecimalString(allow_none=True)
    redeemable = fields.Boolean(required=True)
    status = fields.String(required=True, metadata={"description": (
        "The venue's position status as it wrote it (`OPEN`, `REDEEMABLE`, "
        "`REDEEMABLE_LOST`, `MERGEABLE`, `CLOSED`, or one this version does not know).")})


class TraderProfileSchema(Schema):
    """A wallet as the venue shows it, to judge whether to copy it.

    `pnl_history` replays the wallet's recent trades and redemptions (the last
    `window_rows` rows the venue gave) at average cost, oldest first; its last point is now
    and adds the open positions' unrealized PnL (`unrealized_pnl_usdc`).
    """

    address = fields.String(required=True)
    name = fields.String(required=True)
    trades = fields.Integer(required=True)
    volume_usdc = DecimalString(required=True)
    realized_pnl_usdc = DecimalString(required=True)
    unrealized_pnl_usdc = DecimalString(required=True)
    pnl_usdc = DecimalString(required=True)
    pnl_history = fields.List(fields.Nested(PnlPointSchema), required=True)
    markets = fields.List(fields.Nested(TradedMarketSchema), required=True)
    recent_trades = fields.List(fields.Nested(TraderTradeSchema), required=True)
    positions = fields.List(fields.Nested(TraderPositionSchema), required=True)
    screening = fields.Nested(ScreeningSchema, allow_none=True, dump_default=None, metadata={
        "description": "Its replay through the default rules at our measured delay, with its "
                       "flags (as on GET /api/traders); null until the screening replays it."})
    window_rows = fields.Integer(required=True)
