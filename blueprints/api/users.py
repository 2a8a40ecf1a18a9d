"""The signed-in user's profile."""

from __future__ import annotations

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from schemas.users import UserProfileSchema
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
