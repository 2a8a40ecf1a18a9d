"""Sign-in: request a magic code/link, verify the code or redeem the link for a session JWT."""

from __future__ import annotations

from flask import current_app, jsonify
from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.idempotency import idempotency_exempt
from schemas.auth import MagicRequestSchema, MagicSentSchema, SessionSchema, VerifyCodeSchema
from services import auth

blp = Blueprint("auth", __name__, url_prefix="/api/auth", description="Sign-in")

_NO_USER_YET = "sign-in runs before there is a user to scope a key to; codes are single use."


def _session_body(session: auth.Session) -> dict:
    return {"token": session.token, "token_type": session.token_type,
            "expires_at": session.expires_at, "user": auth_profile(session.user)}


def auth_profile(user: object) -> dict:
    """The profile embedded in a session answer."""
    from services import users

    return users.profile_of(user)  # type: ignore[arg-type]


@blp.route("/magic")
class Magic(MethodView):
    @access.public
    @idempotency_exempt(_NO_USER_YET)
    @blp.arguments(MagicRequestSchema)
    @blp.response(202, MagicSentSchema, description="The sign-in email was sent (`{email}`).")
    @blp.alt_response(200, schema=SessionSchema,
                      description="The link's token was redeemed (`{token}`): a session.")
    @blp.errors(400, 401, 429, 503)
    def post(self, body):
        """Email a sign-in code and link, or redeem the link's token.

        With `{email}`: sends one email holding a 6-digit code and a one-time link
        (both expire in 10 minutes) and answers 202 whether or not the address has an
        account; the first verification creates it. With `{token}` (from the link):
        answers 200 with a session, like `/api/auth/verify-code`.
        """
        if "token" in body:
            # Another body than the 202's schema: serialise it here.
            session = auth.redeem_link(body["token"], current_app.config)
            return jsonify(SessionSchema().dump(_session_body(session)))
        auth.request_login(body["email"], current_app.config)
        return {"status": "sent",
                "message": "If the address can receive mail, a sign-in code is on its way."}


@blp.route("/verify-code")
class VerifyCode(MethodView):
    @access.public
    @idempotency_exempt(_NO_USER_YET)
    @blp.arguments(VerifyCodeSchema)
    @blp.response(200, SessionSchema)
    @blp.errors(400, 401, 429, 503)
    def post(self, body):
        """Exchange the emailed 6-digit code for a session JWT (24 hours, full scope).

        Codes are single use and lock after 5 wrong tries (request a new one).
        A wrong, used, locked or expired code answers 401 `invalid_token`.
        """
        session = auth.verify_code(body["email"], body["code"], current_app.config)
        return _session_body(session)
