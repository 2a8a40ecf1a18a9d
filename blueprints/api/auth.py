"""Sign-in: request a magic code/link, verify the code or redeem the link for a session JWT."""

from __future__ import annotations

from flask import jsonify, request
from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.idempotency import idempotency_exempt
from schemas import request_examples
from schemas.auth import (
    MagicRequestSchema,
    MagicSentSchema,
    SessionSchema,
    StepUpRequestSchema,
    StepUpSchema,
    VerifyCodeSchema,
)
from services.identity import auth

blp = Blueprint("auth", __name__, url_prefix="/api/auth", description="Sign-in")

_NO_USER_YET = "sign-in runs before there is a user to scope a key to; codes are single use."


def _session_body(session: auth.Session) -> dict:
    return {"token": session.token, "token_type": session.token_type,
            "expires_at": session.expires_at, "user": auth_profile(session.user)}


def auth_profile(user: object) -> dict:
    """The profile embedded in a session answer."""
    from services.identity import users

    return users.profile_of(user)  # type: ignore[arg-type]


@blp.route("/magic")
class Magic(MethodView):
    @access.public
    @idempotency_exempt(_NO_USER_YET)
    @blp.arguments(MagicRequestSchema, example=request_examples.MAGIC)
    @blp.response(202, MagicSentSchema, description="The sign-in email was sent (`{email}`).")
    @blp.alt_response(200, schema=SessionSchema,
                      description="The link's token was redeemed (`{token}`): a session.")
    @blp.errors(400, 401, 429, 503)
    def post(self, body):
        """Email a sign-in code and link, or redeem the link's token.

        With `{email}`: sends one email holding a 6-digit code and a one-time link
        (both expire in 10 minutes) and answers 202 whether or not the address has an
        account; the first verification creates it. Earlier codes stay valid until one
        is used or they expire. With `{email, purpose: "step_up"}`: a confirmation code
        for `POST /api/auth/step-up` (no link). With `{token}` (from the link): answers
        200 with a session, like `/api/auth/verify-code`.

        Budgets (in the database, so they hold while Redis is down): at most 5 emails
        per address per hour (beyond it the answer is the same 202 and nothing is sent)
        and 20 per client IP (beyond it 429 `rate_limited` with Retry-After).
        """
        if "token" in body:
            # Another body than the 202's schema: serialise it here.
            session = auth.redeem_link(body["token"])
            return jsonify(SessionSchema().dump(_session_body(session)))
        if body["purpose"] == "step_up":
            auth.request_step_up(body["email"], client_ip=request.remote_addr)
        else:
            auth.request_login(body["email"], client_ip=request.remote_addr)
        return {"status": "sent",
                "message": "If the address can receive mail, a sign-in code is on its way."}


@blp.route("/verify-code")
class VerifyCode(MethodView):
    @access.public
    @idempotency_exempt(_NO_USER_YET)
    @blp.arguments(VerifyCodeSchema, example=request_examples.VERIFY_CODE)
    @blp.response(200, SessionSchema)
    @blp.errors(400, 401, 429, 503)
    def post(self, body):
        """Exchange the emailed 6-digit code for a session JWT (24 hours, full scope).

        Codes are single use and lock after 5 wrong tries (request a new one).
        A wrong, used, locked or expired code answers 401 `invalid_token`. Across
        codes, 10 wrong codes for an address within an hour lock it (every code refused,
        the right one too) until the oldest of them is an hour old, and 50 from one
        client IP lock that IP: 429 `rate_limited` with Retry-After. The emailed link
        still signs in during a lockout.
        """
        session = auth.verify_code(body["email"], body["code"], client_ip=request.remote_addr)
        return _session_body(session)


@blp.route("/step-up")
class StepUp(MethodView):
    @access.jwt_only
    @idempotency_exempt("the code is single use; retrying asks for a new code.")
    @blp.arguments(StepUpRequestSchema, example=request_examples.STEP_UP)
    @blp.response(200, StepUpSchema)
    @blp.errors(400, 401, 403, 429)
    def post(self, body):
        """Exchange a fresh confirmation code for a step-up token (5 minutes).

        Ask for the code with `POST /api/auth/magic` `{email, purpose: "step_up"}`. Send
        the token as the `X-Step-Up-Token` header with a session JWT on
        `POST /api/trading-wallet/withdraw`, on `POST /api/trading-account/connect` and on
        `POST /api/keys` when the key gets `wallet:write`; without a live one those answer
        403 `scope_required`. The token
        is bound to the session that asked for it. API keys and OAuth tokens holding
        `wallet:write` need none. Wrong codes count against the sign-in budgets (429).
        """
        step_up = auth.verify_step_up(access.current_principal(), body["code"],
                                      client_ip=request.remote_addr)
        return {"step_up_token": step_up.token, "expires_at": step_up.expires_at}


@blp.route("/sign-out")
class SignOut(MethodView):
    @access.jwt_only
    @idempotency_exempt("signing out twice is the same as once.")
    @blp.response(204)
    @blp.errors(401, 403, 429)
    def post(self):
        """End this session: its JWT answers 401 `invalid_token` from now on."""
        auth.sign_out(access.current_principal())


@blp.route("/sign-out-everywhere")
class SignOutEverywhere(MethodView):
    @access.jwt_only
    @idempotency_exempt("signing out everywhere twice is the same as once.")
    @blp.response(204)
    @blp.errors(401, 403, 429)
    def post(self):
        """End every session of the account, this one included (API keys and OAuth
        tokens are not affected; revoke those separately)."""
        auth.sign_out_everywhere(access.current_principal())
