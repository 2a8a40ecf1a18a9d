"""The signed-in user's profile."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.idempotency import idempotent
from schemas import request_examples
from schemas.users import UserLimitsSchema, UserProfileSchema
from services.copying import configs
from services.identity import users

blp = Blueprint("users", __name__, url_prefix="/api/users", description="Users")


@blp.route("/me")
class Me(MethodView):
    @access.requires("read:account")
    @blp.response(200, UserProfileSchema)
    @blp.errors(401, 403, 429)
    def get(self):
        """The current user's profile: id, email, tier, created_at, trading wallet address."""
        return users.profile_of(access.current_principal().user)


@blp.route("/me/limits")
class MyLimits(MethodView):
    @access.requires("read:account")
    @blp.response(200, UserLimitsSchema)
    @blp.errors(401, 403, 429)
    def get(self):
        """The user's limits across all its copy configs."""
        return configs.limits(access.current_principal().user)

    @access.requires("trade:execute")
    @idempotent
    @blp.arguments(UserLimitsSchema, example=request_examples.USER_LIMITS)
    @blp.response(200, UserLimitsSchema)
    @blp.errors(400, 401, 403, 429)
    def put(self, body):
        """Set the user's limits across all its copy configs (`max_total_exposure_usdc`, null
        for none); running configs apply them from the target's next trade.
        """
        return configs.set_limits(access.current_principal().user, body)
