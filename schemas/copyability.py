"""Copyability report schemas: the question (window, rules, delays) and the answer.

The rules are a copy config's fields (``ConfigFieldsSchema``), checked once, in
``services.copying.configs.rules.validate_fields``, as for a config.
"""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

from schemas.configs import ConfigFieldsSchema
from schemas.fields import DecimalString

WINDOWS = ["7d", "30d", "90d"]


class CopyabilityRequestSchema(Schema):
    """POST /api/traders/{address}/copyability."""

    class Meta:
        unknown = RAISE

    window = fields.String(load_default="30d", validate=validate.OneOf(WINDOWS), metadata={
        "description": "How far back to replay the target's fills.", "example": "30d"})
    rules = fields.Nested(ConfigFieldsSchema, load_default=None, allow_none=True, metadata={
        "description": "The rules to replay through: a copy config's fields (size_multiplier "
                       "and max_position_usdc required unless sizing_mode says otherwise). "
                       "Give these or config_id."})
    config_id = fields.String(load_default=None, allow_none=True, metadata={
        "description": "One of your configs whose rules to replay through (instead of "
                       "rules)."})
    delay_p50_ms = fields.Integer(load_default=None, allow_none=True, metadata={
        "description": "Assume this typical detection delay (ms) instead of the "
                       "deployment's measured one."})
    delay_p95_ms = fields.Integer(load_default=None, allow_none=True, metadata={
        "description": "Assume this slow-tail (p95) detection delay (ms); defaults to "
                       "delay_p50_ms when only that is given."})


class CopyabilityToolArgsSchema(CopyabilityRequestSchema):
    """MCP get_copyability_report: the trader and the question."""

    address = fields.String(required=True, validate=validate.Length(min=1, max=64), metadata={
        "description": "The trader's wallet (0x and 40 hex digits).",
        "example": "0x52908400098527886e0f7030069857d2e4169ee7"})


class CopyabilityProgressSchema(Schema):
    done = fields.Integer(required=True)
    total = fields.Integer(required=True)
    stage = fields.String(required=True, metadata={"description": "fills, markets or done."})


class CopyDelaysSchema(Schema):
    p50_ms = fields.Integer(required=True)
    p95_ms = fields.Integer(required=True)
    source = fields.String(required=True, metadata={
        "enum": ["measured", "default", "assumed"],
        "description": "`measured`: the deployment's detection delay over the last 7 days' "
                       "copies; `default`: fewer than 20 were measured, so 2 s and 25 s; "
                       "`assumed`: the request's."})
    samples = fields.Integer(required=True)


class TargetSideSchema(Schema):
    pnl_usdc = DecimalString(required=True, metadata={
        "description": "The target's PnL from these fills at its own prices, marked at the "
                       "window's end, less the fees the venue reported."})
    fees_usdc = DecimalString(required=True)
    volume_usdc = DecimalString(required=True)
    markets = fields.Integer(required=True)


class ScenarioSchema(Schema):
    delay_ms = fields.Integer(required=True)
    copies = fields.Integer(required=True)
    exits = fields.Integer(required=True, metadata={
        "description": "Sells the rules made on their own (TP/SL, exits before the end, "
                       "closes on a stop)."})
    skips = fields.Integer(required=True)
    skips_by_reason = fields.Dict(keys=fields.String(), values=fields.Integer(),
                                  required=True, metadata={
                                      "description": "Skips per reason code (the copy "
                                                     "rules' table)."})
    expected_pnl_usdc = DecimalString(required=True)
    versus_target_usdc = DecimalString(required=True, metadata={
        "description": "expected_pnl_usdc minus the target's PnL."})
    fees_usdc = DecimalString(required=True)
    volume_usdc = DecimalString(required=True)
    max_drawdown_usdc = DecimalString(required=True)
    capital_needed_usdc = DecimalString(required=True, metadata={
        "description": "The most pUSD the copies had out at once."})


class MissedSchema(Schema):
    fills = fields.Integer(required=True)
    target_pnl_usdc = DecimalString(required=True)


class UncopyableSchema(Schema):
    too_fast = fields.Nested(MissedSchema, required=True, metadata={
        "description": "Skipped as price_deviation: the price moved past the guard within "
                       "the delay."})
    too_small = fields.Nested(MissedSchema, required=True, metadata={
        "description": "below_min_size, below_min_trade, below_min_target_trade."})
    too_illiquid = fields.Nested(MissedSchema, required=True, metadata={
        "description": "no_liquidity: nothing to take within the order's limit."})
    target_pnl_usdc = DecimalString(required=True)
    share = DecimalString(allow_none=True, metadata={
        "description": "Of the target's PnL (null when it is 0)."})


class MarketShareSchema(Schema):
    market_slug = fields.String(required=True)
    copies = fields.Integer(required=True)
    pnl_usdc = DecimalString(required=True)
    share = DecimalString(allow_none=True, metadata={
        "description": "This market's |PnL| over the sum of every market's |PnL|."})


class BootstrapSchema(Schema):
    level = fields.String(required=True)
    seed = fields.Integer(required=True)
    resamples = fields.Integer(required=True)
    low_usdc = DecimalString(required=True)
    high_usdc = DecimalString(required=True)


class ReliabilitySchema(Schema):
    fills = fields.Integer(required=True)
    copies = fields.Integer(required=True)
    markets = fields.List(fields.Nested(MarketShareSchema), required=True)
    top_market_share = DecimalString(allow_none=True)
    bootstrap = fields.Nested(BootstrapSchema, allow_none=True, metadata={
        "description": "The p50 expected PnL's 90 % interval from resampling the copies "
                       "(seeded: the same inputs give the same interval)."})


class CopyabilityReportSchema(Schema):
    """What copying the target would have done over the window, priced at our delay."""

    address = fields.String(required=True)
    window = fields.String(required=True)
    window_start = fields.DateTime(required=True)
    window_end = fields.DateTime(required=True)
    generated_at = fields.DateTime(required=True)
    delays = fields.Nested(CopyDelaysSchema, required=True)
    truncated = fields.Boolean(required=True, metadata={
        "description": "True when the window held more fills than one report replays (5000; "
                       "the newest are replayed)."})
    rules = fields.Dict(required=True, metadata={"description": "The rules replayed."})
    fills = fields.Integer(required=True)
    target = fields.Nested(TargetSideSchema, required=True)
    p50 = fields.Nested(ScenarioSchema, required=True)
    p95 = fields.Nested(ScenarioSchema, required=True)
    uncopyable = fields.Nested(UncopyableSchema, required=True)
    reliability = fields.Nested(ReliabilitySchema, required=True)


class CopyabilityOperationSchema(Schema):
    """A copyability report being built (202), or built (200, with `report`)."""

    id = fields.UUID(required=True)
    address = fields.String(required=True)
    window = fields.String(required=True)
    status = fields.String(required=True, metadata={"enum": ["queued", "running", "done",
                                                             "failed"]})
    progress = fields.Nested(CopyabilityProgressSchema, required=True)
    location = fields.String(required=True, metadata={
        "description": "Where to follow it: GET this path until status is done."})
    created_at = fields.DateTime(required=True)
    finished_at = fields.DateTime(allow_none=True)
    expires_at = fields.DateTime(required=True, metadata={
        "description": "Until then the same question is answered from this report."})
    error = fields.String(allow_none=True)
    report = fields.Nested(CopyabilityReportSchema, allow_none=True)


EXAMPLE = {
    "id": "5b0f0a3e-3f9e-4b53-9d55-0d4f6f0e2a11",
    "address": "0x52908400098527886e0f7030069857d2e4169ee7", "window": "30d",
    "status": "done", "progress": {"done": 4, "total": 4, "stage": "done"},
    "location": "/api/traders/0x52908400098527886e0f7030069857d2e4169ee7/copyability/"
                "5b0f0a3e-3f9e-4b53-9d55-0d4f6f0e2a11",
    "created_at": "2026-05-01T12:00:00+00:00", "finished_at": "2026-05-01T12:00:04+00:00",
    "expires_at": "2026-05-01T12:15:04+00:00", "error": None,
    "report": {
        "address": "0x52908400098527886e0f7030069857d2e4169ee7", "window": "30d",
        "window_start": "2026-04-01T12:00:00+00:00", "window_end": "2026-05-01T12:00:00+00:00",
        "generated_at": "2026-05-01T12:00:04+00:00",
        "delays": {"p50_ms": 2000, "p95_ms": 25000, "source": "default", "samples": 3},
        "truncated": False, "rules": {"size_multiplier": "0.5", "max_position_usdc": "100"},
        "fills": 153,
        "target": {"pnl_usdc": "50.12", "fees_usdc": "0", "volume_usdc": "1830.4",
                   "markets": 12},
        "p50": {"delay_ms": 2000, "copies": 72, "exits": 0, "skips": 81,
                "skips_by_reason": {"price_deviation": 40, "below_min_size": 30,
                                    "no_position": 11},
                "expected_pnl_usdc": "-16.204311", "versus_target_usdc": "-66.324311",
                "fees_usdc": "3.1", "volume_usdc": "640.2", "max_drawdown_usdc": "41.5",
                "capital_needed_usdc": "212.75"},
        "p95": {"delay_ms": 25000, "copies": 51, "exits": 0, "skips": 102,
                "skips_by_reason": {"price_deviation": 66, "below_min_size": 30,
                                    "no_position": 6},
                "expected_pnl_usdc": "-29.9", "versus_target_usdc": "-80.02",
                "fees_usdc": "2.2", "volume_usdc": "470.9", "max_drawdown_usdc": "52.1",
                "capital_needed_usdc": "180.4"},
        "uncopyable": {"too_fast": {"fills": 40, "target_pnl_usdc": "38.2"},
                       "too_small": {"fills": 30, "target_pnl_usdc": "4.1"},
                       "too_illiquid": {"fills": 0, "target_pnl_usdc": "0"},
                       "target_pnl_usdc": "42.3", "share": "0.843974"},
        "reliability": {"fills": 153, "copies": 72,
                        "markets": [{"market_slug": "will-bitcoin-reach-150k-2026",
                                     "copies": 30, "pnl_usdc": "-12.1", "share": "0.61"}],
                        "top_market_share": "0.61",
                        "bootstrap": {"level": "90%", "seed": 30, "resamples": 1000,
                                      "low_usdc": "-41.3", "high_usdc": "9.8"}},
    },
}

__all__ = ["EXAMPLE", "CopyabilityOperationSchema", "CopyabilityReportSchema",
           "CopyabilityRequestSchema", "CopyabilityToolArgsSchema"]
