"""Helpers: the size_multiplier suggestion and trading readiness (read-only)."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from schemas.configs import ReadinessSchema, SuggestMultiplierArgsSchema, SuggestMultiplierSchema
from services.copying import configs
from services.wallets import readiness

blp = Blueprint("helpers", __name__, url_prefix="/api/helpers", description="Helpers")


@blp.route("/suggest-multiplier")
class SuggestMultiplier(MethodView):
    @access.requires("read:markets")
    @blp.arguments(SuggestMultiplierArgsSchema, location="query")
    @blp.response(200, SuggestMultiplierSchema)
    @blp.errors(400, 401, 403, 429, 503)
    def get(self, args):
        """Recommend a `size_multiplier` for copying `target_address`: a typical target trade,
        mirrored, risks about 5% of the balance (the live venue balance, or `balance`),
        reduced so the target's typical exposure mirrors to at most half of it. Read-only.
        """
        return configs.suggest_multiplier(access.current_principal().user, args["target_address"],
                                          args.get("balance"))


@blp.route("/trading-readiness")
class TradingReadiness(MethodView):
    @access.requires("read:account")
    @blp.response(200, ReadinessSchema)
    @blp.errors(401, 403, 429)
    def get(self):
        """Wallet, venue balance, gas, credentials, active configs and what blocks live
        copy trading.
        """
        return readiness.readiness(access.current_principal().user)
