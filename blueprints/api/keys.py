"""API keys: mint (secret shown once), list, switch confirmations, revoke. Session JWT only."""

from __future__ import annotations

from uuid import UUID

from flask import request
from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.idempotency import idempotency_exempt, idempotent
from schemas import request_examples
from schemas.keys import (
    ApiKeyCreateRequestSchema,
    ApiKeyCreateResponseSchema,
    ApiKeySchema,
    ApiKeyUpdateRequestSchema,
)
from services.identity import agent_confirmations, auth, keys

blp = Blueprint("keys", __name__, url_prefix="/api/keys", description="API keys")


@blp.route("")
class Keys(MethodView):
    @access.jwt_only
    @blp.response(200, ApiKeySchema(many=True))
    @blp.errors(401, 403, 429)
    def get(self):
        """Every API key of the user, newest first; the secret is never included."""
        return keys.list_keys(access.current_principal())

    @access.jwt_only
    @idempotency_exempt("the response holds the key's one-time secret, which is never "
                        "stored, so it cannot be replayed. Retrying mints a second key; "
                        "revoke the spare one.")
    @blp.arguments(ApiKeyCreateRequestSchema, example=request_examples.API_KEY)
    @blp.response(201, ApiKeyCreateResponseSchema)
    @blp.errors(400, 401, 403, 429)
    def post(self, body):
        """Mint a scoped API key; its secret (`svck_live_...`) is returned this once.

        403 `tier_limit_exceeded` when the plan's number of active keys is reached. A key
        with `wallet:write` needs a fresh confirmation code too: send the token of
        `POST /api/auth/step-up` as the `X-Step-Up-Token` header (403 `scope_required`
        without a live one).
        """
        created = keys.create(access.current_principal(),
                              step_up_token=request.headers.get(auth.STEP_UP_HEADER), **body)
        key = created.key
        return {**{field: getattr(key, field) for field in (
            "id", "name", "prefix", "scope_list", "created_at", "last_used_at", "expires_at",
            "revoked_at")}, "secret": created.secret}


@blp.route("/<uuid:key_id>")
class Key(MethodView):
    @access.jwt_only
    @idempotent
    @blp.arguments(ApiKeyUpdateRequestSchema, example=request_examples.API_KEY_UPDATE)
    @blp.response(200, ApiKeySchema)
    @blp.errors(400, 401, 403, 404, 409, 429, 503)
    def patch(self, body, key_id: UUID):
        """Switch whether a person confirms this key's money-moving MCP calls.

        `{"confirm_money_tools": false}` lets the key's agent place orders, copy with real
        funds, raise limits and claim without asking: like minting a key with
        `wallet:write`, it needs a fresh confirmation code, the token of
        `POST /api/auth/step-up` as the `X-Step-Up-Token` header (403 `scope_required`
        without a live one). Turning it back on (`true`) needs none. 404 if not yours.
        """
        return agent_confirmations.switch(
            access.current_principal(), "api_key", key_id, body["confirm_money_tools"],
            request.headers.get(auth.STEP_UP_HEADER))

    @access.jwt_only
    @idempotent
    @blp.response(204)
    @blp.errors(401, 403, 404, 409, 429, 503)
    def delete(self, key_id: UUID):
        """Revoke a key (it answers 401 `invalid_token` from then on); 404 if not yours."""
        keys.revoke(access.current_principal(), key_id)
