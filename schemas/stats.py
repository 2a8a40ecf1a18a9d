"""Platform and user statistics."""

from __future__ import annotations

from marshmallow import Schema, fields

from schemas.fields import DecimalString


class PlatformStatsSchema(Schema):
    """Public platform figures."""

    median_latency_ms = fields.Float(required=True, metadata={
        "description": "Median copy latency over the last 24 hours, in milliseconds."})
    p95_latency_ms = fields.Float(required=True)
    total_users = fields.Integer(required=True)
    total_trades_24h = fields.Integer(required=True)
    total_volume_usdc_24h = DecimalString(required=True)
