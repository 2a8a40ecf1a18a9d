"""The user's OAuth approvals as JSON (the dashboard renders them): list and revoke. JWT only."""

from __future__ import annotations

from uuid import UUID

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.idempotency import idempotent
from schemas.oauth import ApprovalSchema
from services.oauth import tokens as oauth

blp = Blueprint("oauth_approvals", __name__, url_prefix="/api/oauth/approvals",
                description="Applications you allowed to use your account over OAuth")


@blp.route("")
class Approvals(MethodView):
    @access.jwt_only
    @blp.response(200, ApprovalSchema(many=True))
    @blp.errors(401, 403, 429)
    def get(self):
        """Every client the user currently allows, with the scopes allowed, newest first."""
        return oauth.list_approvals(access.current_principal())


@blp.route("/<uuid:approval_id>")
class ApprovalItem(MethodView):
    @access.jwt_only
    @idempotent
    @blp.response(204)
    @blp.errors(401, 403, 404, 409, 429, 503)
    def delete(self, approval_id: UUID):
        """Withdraw an approval: its access and refresh tokens stop working at once."""
        oauth.revoke_approval(access.current_principal(), approval_id)
