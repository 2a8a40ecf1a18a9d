"""Copy-config schemas: create/preview/edit bodies, the config, its status, PnL and decisions.

Bodies are parsed for types here; the bounds and the venue's category list are checked
once, in ``services.copying.configs.rules.validate_fields``, for every surface.
"""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

from schemas.fields import DecimalString
from schemas.trading import TradeSchema

_MULTIPLIER = ("Target shares are multiplied by this (greater than 0, at most 100, 6 decimal "
               "places).")
_MAX_POSITION = ("Cap on the cost basis of each position the config holds (one outcome "
                 "token), in pUSD; buys are cut down to fit (greater than 0).")
_DEVIATION = ("Skip a trade when the book price (best ask to buy, best bid to sell) differs "
              "from the target's fill price by more than this many basis points (0-10000); "
              "also the worst price a mirrored order accepts.")
_BLOCKED = "Categories never copied, from the venue's categories (e.g. `sports`)."
_TP = "Sell the whole position when the best bid is this many bps above its average cost."
_SL = "Sell the whole position when the best bid is this many bps below its average cost."
_PAPER = ("Fill on the paper book instead of the venue. Defaults to true for a user's first "
          "config of a target, false afterwards.")


class ConfigFieldsSchema(Schema):
    """The editable fields of a config (PUT body; every field optional; others refused)."""

    class Meta:
        unknown = RAISE

    target_name = fields.String(allow_none=True, metadata={
        "description": "A label for the target (at most 120 characters)."})
    size_multiplier = DecimalString(metadata={"description": _MULTIPLIER})
    max_position_usdc = DecimalString(metadata={"description": _MAX_POSITION})
    price_deviation_bps = fields.Integer(metadata={"description": _DEVIATION})
    blocked_categories = fields.List(fields.String(), metadata={"description": _BLOCKED})
    take_profit_bps = fields.Integer(allow_none=True, metadata={"description": _TP})
    stop_loss_bps = fields.Integer(allow_none=True, metadata={"description": _SL})
    paper_trading = fields.Boolean(metadata={"description": _PAPER})


class ConfigPreviewRequestSchema(ConfigFieldsSchema):
    """POST /api/configs/preview: the config to be created."""

    target_address = fields.String(required=True, metadata={
        "description": "The wallet to copy, `^0x[0-9a-fA-F]{40}$`."})
    size_multiplier = DecimalString(required=True, metadata={"description": _MULTIPLIER})
    max_position_usdc = DecimalString(required=True, metadata={"description": _MAX_POSITION})


class ConfigCreateRequestSchema(ConfigFieldsSchema):
    """POST /api/configs: the preview to redeem, optionally restating its fields."""

    preview_id = fields.String(required=True, metadata={
        "description": "From POST /api/configs/preview; unexpired, used once."})
    target_address = fields.String()


class CopyConfigSchema(Schema):
    """CopyConfig."""

    id = fields.UUID(required=True)
    target_address = fields.String(required=True)
    target_name = fields.String(required=True)
    size_multiplier = DecimalString(required=True)
    max_position_usdc = DecimalString(required=True)
    price_deviation_bps = fields.Integer(required=True)
    blocked_categories = fields.Method("_blocked", required=True,
                                       metadata={"type": "array", "items": {"type": "string"}})
    take_profit_bps = fields.Integer(allow_none=True)
    stop_loss_bps = fields.Integer(allow_none=True)
    is_active = fields.Boolean(required=True, metadata={
        "description": "True exactly while the config is copying (between start and stop)."})
    paper_trading = fields.Boolean(required=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime()

    def _blocked(self, config) -> list[str]:
        return config.blocked if hasattr(config, "blocked") else list(
            config.get("blocked_categories", []))


class ConfigPreviewSchema(Schema):
    """A preview: its id and expiry, the config it would create, and what it would do."""

    preview_id = fields.UUID(required=True)
    expires_at = fields.DateTime(required=True)
    config = fields.Dict(required=True)
    target = fields.Dict(required=True, metadata={
        "description": "The target's recent fills, typical trade size, exposure, PnL, "
                       "categories (from the venue)."})
    sizing = fields.Dict(required=True)
    guards = fields.Dict(required=True)
    mode = fields.String(required=True, validate=validate.OneOf(["paper", "live"]))
    warnings = fields.List(fields.String(), required=True)


class DecisionSchema(TradeSchema):
    """One copy decision in the Trade shape: copied (an order or paper fill) or skipped.

    Skipped decisions have status `cancelled`, `decision` `skipped` and a `reason`.
    """

    decision = fields.String(required=True, validate=validate.OneOf(["copied", "skipped"]))
    intent_status = fields.String(required=True, metadata={
        "description": "pending, sent, filled, failed, cancelled or skipped."})
    kind = fields.String(required=True, metadata={
        "description": "mirror (a target fill), take_profit or stop_loss."})
    reason = fields.String(allow_none=True)
    detail = fields.String()
    paper = fields.Boolean()
    trade_id = fields.UUID(allow_none=True)
    outcome = fields.String()
    outcome_index = fields.Integer(allow_none=True)
    target_trade = fields.Dict(allow_none=True)
    detection_delay_ms = fields.Integer(allow_none=True, metadata={
        "description": "When we saw the target's trade minus when it traded."})


class ConfigStatusSchema(Schema):
    """Whether the config's executor runs and where, its last detection, error and counts."""

    config_id = fields.UUID(required=True)
    is_active = fields.Boolean(required=True)
    executor_running = fields.Boolean(required=True)
    worker = fields.String(allow_none=True)
    worker_heartbeat_at = fields.String(allow_none=True)
    detection = fields.String(allow_none=True, metadata={
        "description": "How the executor detects the target's trades now: feed (RTDS "
                       "carrying trades) or poll (the feed down or stale)."})
    detection_since = fields.String(allow_none=True, metadata={
        "description": "When that detection source became the live one (ISO time)."})
    detection_last_gap_at = fields.String(allow_none=True, metadata={
        "description": "When the RTDS feed last stopped carrying trades after it had "
                       "(down or stale; ISO time), so detection fell back to polling. "
                       "Null if it has not dropped since the executor started."})
    detection_last_gap_seconds = fields.Float(allow_none=True, metadata={
        "description": "How long that gap lasted, in seconds; while detection is still "
                       "poll, how long it has lasted so far."})
    polls_per_minute = fields.Integer(allow_none=True, metadata={
        "description": "Data API /activity polls the executor's worker made over the last "
                       "minute, for all the targets it watches (fast while polling is the "
                       "source, backstop polls only while the feed is live)."})
    mode = fields.String(required=True)
    target_address = fields.String(required=True)
    last_detection_at = fields.DateTime(allow_none=True)
    last_decision = fields.Nested(DecisionSchema, allow_none=True)
    last_skip = fields.Nested(DecisionSchema, allow_none=True)
    last_error = fields.String(allow_none=True)
    last_error_at = fields.DateTime(allow_none=True)
    fills_last_hour = fields.Integer(required=True)
    fills_last_day = fields.Integer(required=True)
    skips_last_hour = fields.Integer(required=True)
    skips_last_day = fields.Integer(required=True)
    started_at = fields.DateTime(allow_none=True)
    stopped_at = fields.DateTime(allow_none=True)


class ConfigPositionSchema(Schema):
    """One position of a config with its PnL."""

    token_id = fields.String(required=True)
    market_slug = fields.String()
    outcome = fields.String()
    paper = fields.Boolean()
    size = DecimalString(required=True)
    cost_basis = DecimalString(required=True)
    current_price = DecimalString(allow_none=True)
    current_value = DecimalString(allow_none=True)
    unrealized_pnl = DecimalString(required=True)
    realized_pnl = DecimalString(required=True)


class ConfigPnlSchema(Schema):
    """Realized plus unrealized PnL of a config, per position."""

    config_id = fields.UUID(required=True)
    realized_pnl = DecimalString(required=True)
    unrealized_pnl = DecimalString(required=True)
    total_pnl = DecimalString(required=True)
    positions = fields.List(fields.Nested(ConfigPositionSchema), required=True)


class SuggestMultiplierArgsSchema(Schema):
    """Query of GET /api/helpers/suggest-multiplier."""

    target_address = fields.String(required=True, metadata={"description": "The wallet to copy."})
    balance = DecimalString(metadata={
        "description": "USDC to size against instead of the live venue balance."})


class SuggestMultiplierSchema(Schema):
    """A recommended size_multiplier and how it was reached."""

    size_multiplier = DecimalString(required=True)
    balance = DecimalString(required=True)
    balance_source = fields.String(required=True, validate=validate.OneOf(["live", "override"]))
    target_address = fields.String(required=True)
    typical_trade_usdc = DecimalString(required=True)
    target_exposure_usdc = DecimalString(required=True)
    recent_trades = fields.Integer(required=True)
    explanation = fields.String(required=True)


class ReadinessSchema(Schema):
    """Whether live copy trading can run, and what blocks it."""

    wallet_address = fields.String(allow_none=True, metadata={
        "description": "The maker wallet (the deposit wallet for type 3 accounts)."})
    account = fields.Dict(allow_none=True, metadata={
        "description": "The trading account (TradingAccount of /api/trading-account)."})
    onboarding = fields.Dict(required=True, metadata={
        "description": "Onboarding steps (Onboarding of /api/trading-account)."})
    balance_usdc = DecimalString(allow_none=True)
    usdc_e = DecimalString(allow_none=True, metadata={
        "description": "USDC.e in the wallet, to wrap into pUSD before it can trade."})
    usdc_native = DecimalString(allow_none=True, metadata={
        "description": "Circle's native USDC at the maker address: the venue cannot trade it "
                       "(swap it to USDC.e or pUSD); null when the chain cannot tell."})
    gas_matic = DecimalString(allow_none=True)
    venue_credentials = fields.Boolean(required=True)
    allowance_ok = fields.Boolean(allow_none=True, metadata={
        "description": "The exchanges' pUSD allowances as the venue reports them."})
    missing_approvals = fields.List(fields.String(), required=True)
    tier = fields.String(required=True)
    active_configs = fields.Integer(required=True)
    active_live_configs = fields.Integer(required=True)
    max_active_configs = fields.Integer(required=True, allow_none=True,
                                        metadata={"description": "null: unlimited."})
    ready_to_trade = fields.Boolean(required=True)
    blockers = fields.List(fields.Dict(), required=True)
