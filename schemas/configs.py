"""Copy-config schemas: create/preview/edit bodies, the config, its status, PnL and decisions.

Bodies are parsed for types here; the bounds and the venue's category list are checked
once, in ``services.copying.configs.rules.validate_fields``, for every surface.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from marshmallow import RAISE, Schema, fields, validate

from schemas import rule_fields
from schemas.fields import DecimalString
from schemas.trading import StageSplitSchema, TradeSchema

_PAPER = ("Fill on the paper book instead of the venue. Defaults to true for a user's first "
          "config of a target, false afterwards.")


class PriceBandSchema(Schema):
    """One price band: up to ``max_price`` (above the band before), ``max_deviation_bps``."""

    max_price = DecimalString(required=True, metadata={
        "description": "The band's highest price (above 0, at most 1)."})
    max_deviation_bps = fields.Integer(required=True, metadata={
        "description": "The deviation allowed in the band, in bps (0-10000)."})


def _rule_field(rule: rule_fields.RuleField, required: bool) -> fields.Field:
    """The marshmallow field of one declared rule (a config stores lists as JSON text)."""
    meta: dict[str, Any] = {"description": rule.help}
    if rule.kind in rule_fields.DECIMAL_KINDS:
        return DecimalString(required=required, allow_none=rule.nullable, metadata=meta)
    if rule.kind == rule_fields.INTEGER:
        return fields.Integer(required=required, allow_none=rule.nullable, metadata=meta)
    if rule.kind == rule_fields.FLAG:
        return fields.Boolean(required=required, metadata=meta)
    if rule.kind == rule_fields.CHOICE:
        return fields.String(required=required, metadata={**meta, "enum": list(rule.values)})
    if rule.kind == rule_fields.BANDS:
        return fields.List(fields.Nested(PriceBandSchema), required=required, metadata=meta)
    return fields.List(fields.String(), required=required, metadata=meta)


class _StoredList(fields.List):
    """A list rule as a config holds it: JSON text on the model, a list in a dict."""

    def serialize(self, attr: str, obj: Any, accessor: Any = None, **kwargs: Any) -> Any:
        value = obj.get(attr, []) if isinstance(obj, Mapping) else getattr(obj, attr)
        return self._serialize(json.loads(value or "[]") if isinstance(value, str) else value,
                               attr, obj, **kwargs)


def _rule_value(rule: rule_fields.RuleField) -> fields.Field:
    """A stored config's rule as the API shows it (lists decoded from the model's text)."""
    if rule.kind == rule_fields.BANDS:
        return _StoredList(fields.Nested(PriceBandSchema), required=True,
                           metadata={"description": rule.help})
    if rule.kind not in rule_fields.LIST_KINDS:
        return _rule_field(rule, required=True)
    return fields.Function(lambda config: rule.loaded(getattr(config, rule.name)) if not
                           isinstance(config, Mapping) else list(config.get(rule.name, [])),
                           required=True, metadata={"type": "array", "items": {"type": "string"},
                                                    "description": rule.help})


# The basics keep the shapes the API has always had: no null where the rule is never off.
_RULE_INPUTS = {rule.name: _rule_field(rule, required=False) for rule in rule_fields.RULES}
_RULE_VALUES = {rule.name: _rule_value(rule) for rule in rule_fields.RULES}
for _name in ("take_profit_bps", "stop_loss_bps"):  # optional in a config, as before
    _RULE_VALUES[_name] = _rule_field(rule_fields.BY_NAME[_name], required=False)


class ConfigFieldsSchema(Schema.from_dict(_RULE_INPUTS, name="_ConfigRules")):  # type: ignore[misc]
    """The editable fields of a config (PUT body; every field optional; others refused)."""

    class Meta:
        unknown = RAISE

    target_name = fields.String(allow_none=True, metadata={
        "description": "A label for the target (at most 120 characters)."})
    paper_trading = fields.Boolean(metadata={"description": _PAPER})


class ConfigPreviewRequestSchema(ConfigFieldsSchema):
    """POST /api/configs/preview: the config to be created."""

    target_address = fields.String(required=True, metadata={
        "description": "The wallet to copy, `^0x[0-9a-fA-F]{40}$`."})
    size_multiplier = DecimalString(metadata={
        "description": rule_fields.BY_NAME["size_multiplier"].help
        + " Required unless sizing_mode is fixed_usdc."})
    max_position_usdc = DecimalString(required=True, metadata={
        "description": rule_fields.BY_NAME["max_position_usdc"].help})


class ConfigCreateRequestSchema(ConfigFieldsSchema):
    """POST /api/configs: the preview to redeem, optionally restating its fields."""

    preview_id = fields.String(required=True, metadata={
        "description": "From POST /api/configs/preview; unexpired, used once."})
    target_address = fields.String()


class CopyConfigSchema(Schema.from_dict(_RULE_VALUES, name="_ConfigRuleValues")):  # type: ignore[misc]
    """CopyConfig."""

    id = fields.UUID(required=True)
    target_address = fields.String(required=True)
    target_name = fields.String(required=True)
    is_active = fields.Boolean(required=True, metadata={
        "description": "True exactly while the config is copying (between start and stop)."})
    paper_trading = fields.Boolean(required=True)
    stopped_reason = fields.String(allow_none=True, metadata={
        "description": "Why the config stopped by itself: `loss_stop` or `drawdown_stop` "
                       "(null when running, or stopped by its user)."})
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime()


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
    recent_buys = fields.Dict(required=True, metadata={
        "description": "The target's recent buys decided by the config's rules: `decided`, "
                       "`outcomes` (`copied` or a reason code, with counts) and the `rule`."})
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
    target_trade = fields.Dict(allow_none=True, metadata={
        "description": "The target's fill a mirror decision answered: `key`, `side`, `size`, "
                       "`price`, `traded_at` (ISO 8601, UTC) and `tx_hash`; null for exits."})
    detection_delay_ms = fields.Integer(allow_none=True, metadata={
        "description": "When we saw the target's trade minus when it traded."})


QUALITY_PERIODS = ["24h", "7d", "30d"]


class QualityArgsSchema(Schema):
    """The period a config's execution quality covers."""

    period = fields.String(load_default="24h", validate=validate.OneOf(QUALITY_PERIODS),
                           metadata={"description": "24h, 7d or 30d (default 24h)."})


class SlippageFiguresSchema(Schema):
    """Slippage of the period's filled copies, in bps (positive: worse than the target)."""

    count = fields.Integer(required=True)
    mean = DecimalString(allow_none=True)
    p95 = DecimalString(allow_none=True)
    max = DecimalString(allow_none=True)


class SlippageBucketSchema(Schema):
    from_bps = fields.Integer(required=True)
    to_bps = fields.Integer(required=True)
    count = fields.Integer(required=True)


class QualityPointSchema(Schema):
    """One filled copy, as the charts draw it: when, its slippage and each stage."""

    at = fields.DateTime(required=True)
    slippage_bps = DecimalString(allow_none=True)
    detection_ms = fields.Integer(allow_none=True)
    decision_ms = fields.Integer(allow_none=True)
    placement_ms = fields.Integer(allow_none=True)
    ack_ms = fields.Integer(allow_none=True)
    settlement_ms = fields.Integer(allow_none=True)
    taker_delay_ms = fields.Integer(allow_none=True)


QUALITY_EXAMPLE = {
    "config_id": "6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f", "period": "24h",
    "since": "2026-10-01T12:00:00+00:00", "until": "2026-10-02T12:00:00+00:00",
    "copies": 12, "filled": 10, "skips": 5, "failures": 1, "unfilled": 1,
    "fill_ratio": "0.8333", "fees": "0.184",
    "slippage_bps": {"count": 10, "mean": "61.40", "p95": "200.00", "max": "200.00"},
    "stages": {
        "detection": {"count": 12, "p50_ms": 1400, "p95_ms": 2900, "max_ms": 3100},
        "decision": {"count": 12, "p50_ms": 3, "p95_ms": 9, "max_ms": 12},
        "placement": {"count": 11, "p50_ms": 4, "p95_ms": 8, "max_ms": 10},
        "ack": {"count": 11, "p50_ms": 38, "p95_ms": 95, "max_ms": 120},
        "settlement": {"count": 11, "p50_ms": 2, "p95_ms": 5, "max_ms": 5200},
        "taker_delay": {"count": 1, "p50_ms": 5000, "p95_ms": 5000, "max_ms": 5000}},
    "histogram": [{"from_bps": 0, "to_bps": 25, "count": 7},
                  {"from_bps": 200, "to_bps": 225, "count": 3}],
    "points": [{"at": "2026-10-02T09:14:03+00:00", "slippage_bps": "200.00",
                "detection_ms": 1400, "decision_ms": 3, "placement_ms": 4, "ack_ms": 38,
                "settlement_ms": 2, "taker_delay_ms": None}],
}


class ConfigQualitySchema(Schema):
    """A config's execution quality over a period: its mirrored copies' stage delays,
    slippage against the target's fills, fees, fill ratio, copies, skips and failures."""

    config_id = fields.UUID(required=True)
    period = fields.String(required=True, validate=validate.OneOf(QUALITY_PERIODS))
    since = fields.DateTime(required=True)
    until = fields.DateTime(required=True)
    copies = fields.Integer(required=True, metadata={
        "description": "Target fills the config decided to copy (filled, failed, unfilled "
                       "or still open)."})
    filled = fields.Integer(required=True)
    skips = fields.Integer(required=True, metadata={
        "description": "Target fills the config's rules skipped."})
    failures = fields.Integer(required=True)
    unfilled = fields.Integer(required=True, metadata={
        "description": "Copies sent that the venue did not fill (FAK with nothing at the "
                       "price)."})
    fill_ratio = DecimalString(allow_none=True, metadata={
        "description": "filled / copies (null without copies)."})
    fees = DecimalString(required=True, metadata={"description": "pUSD of taker fees paid."})
    slippage_bps = fields.Nested(SlippageFiguresSchema, required=True)
    stages = fields.Nested(StageSplitSchema, required=True, metadata={
        "description": "p50, p95 and max of each stage over the copies that measured it."})
    histogram = fields.List(fields.Nested(SlippageBucketSchema), required=True, metadata={
        "description": "Filled copies per 25 bps of slippage, lowest bucket first."})
    points = fields.List(fields.Nested(QualityPointSchema), required=True, metadata={
        "description": "Each filled copy, oldest first (the charts' data)."})


class BuysPausedSchema(Schema):
    """Buying paused by the copy engine: why (a skip reason code) and since when."""

    reason = fields.String(required=True)
    since = fields.DateTime(allow_none=True)


class BreakerSchema(Schema):
    """The failure breaker: closed (copying), open (paused until retry_at) or half (the next
    copy tries; a success closes it, a failure opens it again for longer)."""

    state = fields.String(required=True, validate=validate.OneOf(["closed", "open", "half"]))
    failures = fields.Integer(required=True, metadata={
        "description": "Failed copies in a row."})
    retry_at = fields.DateTime(allow_none=True)
    last_error = fields.String(allow_none=True)


class ConfigStatusSchema(Schema):
    """Whether the config's executor runs and where, its last detection, error and counts."""

    config_id = fields.UUID(required=True)
    is_active = fields.Boolean(required=True)
    executor_running = fields.Boolean(required=True)
    worker = fields.String(allow_none=True)
    worker_heartbeat_at = fields.String(allow_none=True)
    detection = fields.String(allow_none=True, metadata={
        "description": "How the executor detects the target's trades now: feed (RTDS "
                       "activity/trades), matched (RTDS activity/orders_matched, where "
                       "trades went quiet), chain (the exchanges' OrderFilled logs, the "
                       "feed degraded) or poll (Data API polls: the feed degraded and no "
                       "chain read)."})
    detection_since = fields.String(allow_none=True, metadata={
        "description": "When that detection source became the live one (ISO time)."})
    detection_last_gap_at = fields.String(allow_none=True, metadata={
        "description": "When the RTDS feed last stopped carrying trades after it had "
                       "(down or stale; ISO time), so detection fell back to the chain or "
                       "polling. "
                       "Null if it has not dropped since the executor started."})
    detection_last_gap_seconds = fields.Float(allow_none=True, metadata={
        "description": "How long that gap lasted, in seconds; while detection is still "
                       "chain or poll, how long it has lasted so far."})
    polls_per_minute = fields.Integer(allow_none=True, metadata={
        "description": "Data API /activity polls the executor's worker made over the last "
                       "minute, for all the targets it watches (fast while polling is the "
                       "source, backstop polls only while the feed or the chain detects)."})
    chain_calls_per_minute = fields.Integer(allow_none=True, metadata={
        "description": "Chain JSON-RPC calls (eth_blockNumber, eth_getLogs, eth_getBlock"
                       "ByNumber, subscriptions) the worker made over the last minute: what "
                       "a hosted RPC bills."})
    detection_chain = fields.String(allow_none=True, metadata={
        "description": "On-chain detection beside it (the exchanges' OrderFilled logs of "
                       "the target): live, down (the chain RPC unreachable; the feed and "
                       "polling go on), standby (read only while the feed is degraded: "
                       "COPY_CHAIN_FALLBACK), or off (no chain RPC)."})
    detection_chain_mode = fields.String(allow_none=True, metadata={
        "description": "How the chain is read: websocket (pushed as blocks come) or logs "
                       "(read every block over HTTP); empty when off."})
    detection_chain_since = fields.String(allow_none=True, metadata={
        "description": "When on-chain detection became live or down (ISO time)."})
    detection_pending = fields.Boolean(allow_none=True, metadata={
        "description": "Whether pending match calls are read (configs with "
                       "copy_pending_matches copy before the block)."})
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
    stopped_reason = fields.String(allow_none=True, metadata={
        "description": "`loss_stop` or `drawdown_stop` when a stop ended the config."})
    breaker = fields.Nested(BreakerSchema, required=True)
    buys_paused = fields.Nested(BuysPausedSchema, allow_none=True, metadata={
        "description": "Set while the copy engine pauses the config's buying (sales still "
                       "follow): `stop_unverified` when its loss or drawdown stop has not "
                       "been able to value a held position for over a minute."})
    out_of_funds = fields.Boolean(required=True, metadata={
        "description": "The latest failed copy found too little balance, or the latest "
                       "decision was a skip for balance (`insufficient_balance`)."})
    reasons_24h = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True,
                              metadata={"description": "Skips and failures per reason code, "
                                                       "last 24 hours."})
    reasons_7d = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True,
                             metadata={"description": "Skips and failures per reason code, "
                                                      "last 7 days."})


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
