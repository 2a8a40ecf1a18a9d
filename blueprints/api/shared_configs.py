"""Shared setups (issue 45): share a config's rules by link, revoke it, read a link."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.idempotency import idempotency_exempt, idempotent
from schemas import request_examples
from schemas.shared_configs import (
    SHARE_EXAMPLE,
    SHARED_EXAMPLE,
    SharedConfigSchema,
    ShareLinkSchema,
    ShareRequestSchema,
)
from services.copying.configs import sharing

blp = Blueprint("shared_configs", __name__, url_prefix="/api",
                description="Shared setups: a config's rules by link")


@blp.route("/configs/<config_id>/share")
class ConfigShare(MethodView):
    @access.requires("trade:execute")
    @idempotency_exempt("the response holds the link's token, which is never stored, so it "
                        "cannot be replayed. Retrying makes a new link and the first one "
                        "stops working, which is what a retry wants.")
    @blp.arguments(ShareRequestSchema, required=False, example=request_examples.SHARE)
    @blp.response(201, ShareLinkSchema, example=SHARE_EXAMPLE)
    @blp.errors(400, 401, 403, 404, 429)
    def post(self, body, config_id: str):
        """Share the config's rules: a new link, shown once (only its hash is stored).

        The link carries the trader the config copies and its rules, read live (an edit
        shows at once); never your name for the trader, your wallet, balance or PnL. With
        `show_results: true` it also shows the config's realized, unrealized and total PnL,
        its number of filled copies and whether they were paper fills. A config has one
        link: sharing again makes a new one and the old one stops working (404). 404
        `not_found` for a config that is not yours.
        """
        return sharing.share(access.current_principal().user, config_id,
                             show_results=(body or {}).get("show_results", False))

    @access.requires("trade:execute")
    @idempotent
    @blp.response(204)
    @blp.errors(401, 403, 404, 429)
    def delete(self, config_id: str):
        """Revoke the config's link: opening it answers 404 from now on (204 also when the
        config had none). Deleting the config revokes it too."""
        sharing.revoke(access.current_principal().user, config_id)
        return None


@blp.route("/shared-configs/<token>")
class SharedSetup(MethodView):
    @access.requires("read:markets")
    @blp.response(200, SharedConfigSchema, example=SHARED_EXAMPLE)
    @blp.errors(401, 403, 404, 429, 503)
    def get(self, token: str):
        """A shared setup: the trader it copies and its rules, to send to POST
        /api/configs/preview as they are (with your own `target_name` and `paper_trading`);
        `results` is null unless its owner chose to show them. Any signed-in user or key
        with `read:markets` may read a link; 404 `not_found` for an unknown or revoked one.
        """
        return sharing.read(token)
