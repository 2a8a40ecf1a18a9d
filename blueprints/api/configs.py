"""Copy configs: preview, create, list, read, edit, delete, start/stop, status, PnL, decisions."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.api.pagination import PAGINATION_HEADERS, paged
from blueprints.idempotency import idempotent
from schemas import request_examples
from schemas.common import PageArgsSchema
from schemas.configs import (
    QUALITY_EXAMPLE,
    ConfigCreateRequestSchema,
    ConfigFieldsSchema,
    ConfigPnlSchema,
    ConfigPreviewRequestSchema,
    ConfigPreviewSchema,
    ConfigQualitySchema,
    ConfigStatusSchema,
    CopyConfigSchema,
    DecisionSchema,
    QualityArgsSchema,
)
from services.copying import configs

blp = Blueprint("configs", __name__, url_prefix="/api/configs",
                description="Copy-trading configs")


@blp.route("/preview")
class ConfigPreview(MethodView):
    @access.requires("trade:execute")
    @idempotent
    @blp.arguments(ConfigPreviewRequestSchema, example=request_examples.CONFIG_PREVIEW)
    @blp.response(200, ConfigPreviewSchema)
    @blp.errors(400, 401, 403, 429, 503)
    def post(self, body):
        """Preview a config: the target's recent activity, PnL and categories, the sizing,
        caps, TP/SL and mode. Answers a `preview_id` that POST /api/configs redeems once
        before `expires_at` (10 minutes).
        """
        return configs.preview(access.current_principal().user, body)


@blp.route("")
class Configs(MethodView):
    @access.requires("read:account")
    @blp.response(200, CopyConfigSchema(many=True))
    @blp.errors(401, 403, 429)
    def get(self):
        """The caller's copy configs, newest first."""
        return configs.list_configs(access.current_principal().user)

    @access.requires("trade:execute")
    @idempotent
    @blp.arguments(ConfigCreateRequestSchema, example=request_examples.CONFIG_CREATE)
    @blp.response(201, CopyConfigSchema)
    @blp.errors(400, 401, 403, 409, 429)
    def post(self, body):
        """Create a config from an unexpired preview (created inactive: POST .../start).

        Fields sent besides `preview_id` must equal the previewed ones (400
        `validation_failed` naming the field otherwise).
        """
        return configs.create(access.current_principal().user, body)


@blp.route("/<config_id>")
class ConfigItem(MethodView):
    @access.requires("read:account")
    @blp.response(200, CopyConfigSchema)
    @blp.errors(401, 403, 404, 429)
    def get(self, config_id: str):
        """One of the caller's configs."""
        return configs.get(access.current_principal().user, config_id)

    @access.requires("trade:execute")
    @idempotent
    @blp.arguments(ConfigFieldsSchema, example=request_examples.CONFIG_EDIT)
    @blp.response(200, CopyConfigSchema)
    @blp.errors(400, 401, 403, 404, 429)
    def put(self, body, config_id: str):
        """Edit a config. Editable: `target_name`, `size_multiplier`, `max_position_usdc`,
        `price_deviation_bps`, `blocked_categories`, `take_profit_bps`, `stop_loss_bps`,
        `paper_trading` (each optional; `target_address` cannot change). A running executor
        applies the change from its next decision, without a restart.
        """
        return configs.update(access.current_principal().user, config_id, body)

    @access.requires("trade:execute")
    @idempotent
    @blp.response(204)
    @blp.errors(401, 403, 404, 429)
    def delete(self, config_id: str):
        """Stop and delete a config (its decision history is kept for the trades ledger)."""
        configs.delete(access.current_principal().user, config_id)
        return None


@blp.route("/<config_id>/start")
class ConfigStart(MethodView):
    @access.requires("trade:execute")
    @idempotent
    @blp.response(200, CopyConfigSchema)
    @blp.errors(401, 403, 404, 429)
    def post(self, config_id: str):
        """Start copying: `is_active` becomes true; 403 `tier_limit_exceeded` past the plan's
        active-config limit. A worker picks it up within a second.
        """
        return configs.start(access.current_principal().user, config_id)


@blp.route("/<config_id>/stop")
class ConfigStop(MethodView):
    @access.requires("trade:execute")
    @idempotent
    @blp.response(200, CopyConfigSchema)
    @blp.errors(401, 403, 404, 429)
    def post(self, config_id: str):
        """Stop copying: `is_active` becomes false; no new decision is made afterwards."""
        return configs.stop(access.current_principal().user, config_id)


@blp.route("/<config_id>/status")
class ConfigStatus(MethodView):
    @access.requires("read:account")
    @blp.response(200, ConfigStatusSchema)
    @blp.errors(401, 403, 404, 429)
    def get(self, config_id: str):
        """Whether the executor runs and on which worker, the last detection, decision, skip
        and error, and fills/skips in the last hour and day.
        """
        return configs.status(access.current_principal().user, config_id)


@blp.route("/<config_id>/pnl")
class ConfigPnl(MethodView):
    @access.requires("read:account")
    @blp.response(200, ConfigPnlSchema)
    @blp.errors(401, 403, 404, 429, 503)
    def get(self, config_id: str):
        """Realized plus unrealized PnL, with each position marked at the best bid."""
        return configs.pnl(access.current_principal().user, config_id)


@blp.route("/<config_id>/quality")
class ConfigQuality(MethodView):
    @access.requires("read:account")
    @blp.arguments(QualityArgsSchema, location="query")
    @blp.response(200, ConfigQualitySchema, example=QUALITY_EXAMPLE)
    @blp.errors(400, 401, 403, 404, 429)
    def get(self, args, config_id: str):
        """Execution quality over `period` (24h, 7d, 30d): p50, p95 and max of each stage
        (detection, decision, placement, venue acknowledgement, settlement, taker delay),
        mean and p95 slippage in bps against the target's fills (positive: worse for us),
        fees, fill ratio, copies, skips and failures, and the points the dashboard charts.
        """
        return configs.quality(access.current_principal().user, config_id, args["period"])


@blp.route("/<config_id>/trades")
class ConfigTrades(MethodView):
    @access.requires("read:trades")
    @blp.arguments(PageArgsSchema, location="query")
    @blp.response(200, DecisionSchema(many=True), headers=PAGINATION_HEADERS)
    @blp.errors(400, 401, 403, 404, 429)
    def get(self, args, config_id: str):
        """Every decision of the config, newest first (bare array, X-Pagination-* headers):
        copied ones with their order's outcome, skipped ones with `reason` and `detail`.
        """
        return paged(configs.decisions(access.current_principal().user, config_id, **args))
