"""Shared setups (issue 45): the share request, the link, and what a link shows.

The rules a link carries are a copy config's fields (``ConfigFieldsSchema``), so a reader
can send them, with the trader's address, to POST /api/configs/preview as they are.
"""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields

from schemas.configs import ConfigFieldsSchema
from schemas.fields import DecimalString

_TOKEN = "Xk3v9Qm0aZ7rT2yL8pW4nB6cD1eF5gH0jK2lM4nP6qR"
_CREATED = "2026-12-07T14:00:00+00:00"


class ShareRequestSchema(Schema):
    """POST /api/configs/{id}/share (the body is optional)."""

    class Meta:
        unknown = RAISE

    show_results = fields.Boolean(load_default=False, metadata={
        "description": "Also show the config's results (realized, unrealized and total PnL, "
                       "the number of filled copies, whether they were paper fills, and "
                       "since when) to whoever opens the link. Default false: the rules "
                       "only.", "example": False})


class ShareLinkSchema(Schema):
    """A config's link, as its owner sees it once."""

    config_id = fields.UUID(required=True)
    token = fields.String(required=True, metadata={
        "description": "The link's secret part (43 characters, URL-safe). Shown once: "
                       "only its hash is stored. GET /api/shared-configs/{token} reads it.",
        "example": _TOKEN})
    url = fields.String(required=True, metadata={
        "description": "The dashboard page that shows the rules and offers to use them.",
        "example": f"https://copytrade.example/dashboard/shared/{_TOKEN}"})
    show_results = fields.Boolean(required=True)
    created_at = fields.DateTime(required=True)


SHARE_EXAMPLE = {"config_id": "4f2c7a8e-1b3d-4c5e-9f60-7a8b9c0d1e2f", "token": _TOKEN,
                 "url": f"https://copytrade.example/dashboard/shared/{_TOKEN}",
                 "show_results": False, "created_at": _CREATED}


class SharedResultsSchema(Schema):
    """The config's results, shown only when its owner ticked "show my results"."""

    realized_pnl = DecimalString(required=True)
    unrealized_pnl = DecimalString(required=True, metadata={
        "description": "Open positions marked at the best bid."})
    total_pnl = DecimalString(required=True)
    copies = fields.Integer(required=True, metadata={
        "description": "The config's orders that filled (exits included)."})
    paper_trading = fields.Boolean(required=True, metadata={
        "description": "True when the config fills on the paper book: the results are "
                       "simulated."})
    since = fields.DateTime(required=True, metadata={"description": "When the config was "
                                                     "created."})


class SharedConfigSchema(Schema):
    """What a shared link shows: whom the setup copies and its rules (never the owner's
    wallet, balance or PnL unless the owner chose to show the results)."""

    target_address = fields.String(required=True, metadata={
        "description": "The trader the setup copies (a public wallet, not the owner's).",
        "example": "0x52908400098527886e0f7030069857d2e4169ee7"})
    rules = fields.Nested(ConfigFieldsSchema, required=True, metadata={
        "description": "The config's rules as POST /api/configs/preview takes them (every "
                       "field but `target_name` and `paper_trading`)."})
    shared_at = fields.DateTime(required=True)
    results = fields.Nested(SharedResultsSchema, required=True, allow_none=True, metadata={
        "description": "Null unless the owner shared the results."})


SHARED_EXAMPLE = {
    "target_address": "0x52908400098527886e0f7030069857d2e4169ee7",
    "rules": {"sizing_mode": "fixed_usdc", "fixed_usdc": "5", "max_position_usdc": "50",
              "price_deviation_bps": 200, "blocked_categories": ["sports"],
              "take_profit_bps": None, "stop_loss_bps": 3000, "copy_sells": True,
              "min_price": "0.1", "max_price": "0.9", "daily_budget_usdc": "40"},
    "shared_at": _CREATED,
    "results": {"realized_pnl": "12.40", "unrealized_pnl": "-1.75", "total_pnl": "10.65",
                "copies": 37, "paper_trading": False, "since": "2026-11-20T09:30:00+00:00"},
}
