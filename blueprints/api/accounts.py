"""The trading account: its status and onboarding steps, starting (or retrying) onboarding,
connecting an existing polymarket.com account (session only, with a step-up: a private key
never comes through an API key, OAuth or MCP)."""

from __future__ import annotations

from flask import request
from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.idempotency import idempotency_exempt, idempotent
from schemas import request_examples
from schemas.accounts import (
    ConnectAccountSchema,
    OnboardingSchema,
    WrapRequestSchema,
    WrapSchema,
)
from services.identity import auth
from services.wallets import collateral, onboarding, trading_accounts

blp = Blueprint("accounts", __name__, url_prefix="/api", description="Trading account")


@blp.route("/trading-account")
class TradingAccount(MethodView):
    @access.requires("read:account")
    @blp.response(200, OnboardingSchema)
    @blp.errors(401, 403, 429)
    def get(self):
        """The trading account and where its onboarding stands, step by step."""
        return onboarding.checked_status(access.current_principal().user)


@blp.route("/trading-account/onboarding")
class Onboarding(MethodView):
    @access.requires("wallet:write")
    @idempotency_exempt("onboarding is one job per account: asking again follows the same "
                        "run, or retries it from its failed step.")
    @blp.response(202, OnboardingSchema)
    @blp.errors(401, 403, 429, 500, 503)
    def post(self):
        """Start onboarding (deploy, approvals, credentials, balance update) as a job, or
        retry it from its failed step; follow it with GET /api/trading-account."""
        return onboarding.start(access.current_principal().user)


@blp.route("/trading-account/connect")
class Connect(MethodView):
    @access.jwt_only
    @idempotency_exempt("an account connects once: a repeat answers 409.")
    @blp.arguments(ConnectAccountSchema, example=request_examples.CONNECT)
    @blp.response(201, OnboardingSchema)
    @blp.errors(400, 401, 403, 409, 429, 500)
    def post(self, args):
        """Connect an existing polymarket.com account (its wallet and signer key, optionally
        its Relayer API key) as the trading account, then onboard it. 400
        ``validation_failed`` names the field (a key that does not control the wallet:
        ``private_key``); 409 when the user already has a trading wallet that is not the
        unused one their first sign-in made (that one is replaced; the 409 says why another
        cannot be: ``holds pUSD``, ``has placed orders``, ...).

        Like a withdrawal, it needs a step-up token (`POST /api/auth/step-up`, 5 minutes) as
        the `X-Step-Up-Token` header: the wallet connected is where the account's deposits
        go, so a stolen session alone must not choose it. Without a live one the answer is
        403 `scope_required` and nothing is connected.
        """
        principal = access.current_principal()
        auth.require_step_up(principal, request.headers.get(auth.STEP_UP_HEADER))
        trading_accounts.connect(principal.user, **args)
        return onboarding.start(principal.user)


@blp.route("/trading-account/wrap")
class Wrap(MethodView):
    @access.requires("wallet:write")
    @idempotent
    @blp.arguments(WrapRequestSchema, example=request_examples.WRAP)
    @blp.response(202, WrapSchema)
    @blp.errors(400, 401, 403, 409, 429)
    def post(self, args):
        """Wrap the deposit wallet's USDC.e into pUSD through the onramp (a relayer batch,
        no POL); follow it with GET /api/trading-account/wraps/{id}. Rarely needed: the
        deposit watcher wraps USDC.e of at least AUTO_WRAP_MIN_USDC_E by itself. 409
        ``conflict`` while another wrap of the wallet is in flight (one at a time)."""
        row = collateral.request_wrap(access.current_principal().user, args["amount"])
        return collateral.describe(row)


@blp.route("/trading-account/wraps/<uuid:wrap_id>")
class WrapStatus(MethodView):
    @access.requires("read:account")
    @blp.response(200, WrapSchema)
    @blp.errors(401, 403, 404, 429)
    def get(self, wrap_id):
        """One wrap and where it stands."""
        return collateral.describe(collateral.get(access.current_principal().user, wrap_id))
