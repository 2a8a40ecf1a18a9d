"""The relayer's HTTP surface (ACCOUNTS.md §2.3-2.5, §3, §10), served under ``/relayer``.

* POST /submit                                  WALLET-CREATE, WALLET, PROXY or SAFE
                                                (relayer auth)
* GET  /nonce?address&type=WALLET|PROXY|SAFE    {"nonce"} (legacy)
* GET  /relay-payload?address&type=PROXY        {"address": relay, "nonce"}
* GET  /v1/account/transactions/params?address&type   {"address", "nonce"} (relayer auth)
* GET  /transaction?id=                         [transaction] camelCase (legacy)
* GET  /v1/account/transactions/<id>            transaction, snake_case (relayer auth)
* GET  /transactions                            [transaction] camelCase: the caller's, newest
                                                first (relayer auth)
* GET  /deployed?address&type=WALLET            {"deployed"}
* GET  /relayer/api/keys                        the caller's Relayer API keys (relayer auth)
* POST /v1/session-signers/authorizations       grant a session key (builder auth,
                                                ``Idempotency-Key``)
* POST /v1/session-signers/revocations          revoke one (relayer auth, ``Idempotency-Key``)

Builder HMAC signs the path without the ``/relayer`` prefix (the client's base URL ends
there), as the SDKs sign the path after their relayer URL.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps

from flask import Blueprint, current_app, g, request

from devstack.venue.legacy_relay import RELAY_ADDRESS
from devstack.venue.relay import ERR_PAYLOAD, legacy_json, v1_json
from devstack.venue.responses import error_response, json_response
from devstack.venue.state import Principal, SandboxState, VenueRejection

bp = Blueprint("sandbox_relayer", __name__)

PREFIX = "/relayer"


def _state() -> SandboxState:
    return current_app.extensions["sandbox_state"]


@bp.errorhandler(VenueRejection)
def _rejected(exc: VenueRejection):
    return error_response(exc.message, exc.status)


def _auth_headers() -> dict[str, str]:
    """The POLY_BUILDER_* and RELAYER_API_KEY* headers (underscored, read from the environ)."""
    return {key[5:]: value for key, value in request.environ.items()
            if key.startswith(("HTTP_POLY_BUILDER_", "HTTP_RELAYER_API_KEY"))}


def relayer_auth(view: Callable) -> Callable:
    """Require Builder HMAC or Relayer API key headers; the caller lands in g.principal."""

    @wraps(view)
    def wrapper(*args, **kwargs):
        path = request.path.removeprefix(PREFIX)
        state = _state()
        with state.lock:
            g.principal = state.relayer.authenticate(
                _auth_headers(), request.method, path, request.get_data(as_text=True),
                submitting=request.method == "POST")
        return view(*args, **kwargs)

    return wrapper


def _address_arg() -> str:
    address = request.args.get("address", "")
    if not address:
        raise VenueRejection("address is required")
    return address


@bp.post("/submit")
@relayer_auth
def submit():
    """POST /submit: queue a deposit-wallet transaction; answers {transactionID, state}."""
    try:
        body = json.loads(request.get_data(as_text=True) or "null")
    except ValueError as exc:
        raise VenueRejection(ERR_PAYLOAD) from exc
    principal: Principal = g.principal
    state = _state()
    with state.lock:
        tx = state.relayer.submit(principal, body)
    return json_response({"transactionID": tx.id, "state": tx.state})


def _type_arg() -> str:
    return request.args.get("type") or "WALLET"


@bp.get("/nonce")
def nonce():
    """GET /nonce (legacy): the nonce of the address's wallet of that type."""
    state = _state()
    with state.lock:
        nonce_now = state.relayer.nonce_of(_address_arg(), _type_arg())
    return json_response({"nonce": str(nonce_now)})


@bp.get("/v1/account/transactions/params")
@relayer_auth
def execute_params():
    """GET /v1/account/transactions/params: {address, nonce} (type WALLET or SAFE)."""
    address = _address_arg()
    state = _state()
    with state.lock:
        nonce_now = state.relayer.nonce_of(address, _type_arg())
    return json_response({"address": address, "nonce": str(nonce_now)})


@bp.get("/relay-payload")
def relay_payload():
    """GET /relay-payload?address&type=PROXY: {address: the relay, nonce} a PROXY
    transaction is signed with."""
    if _type_arg() != "PROXY":
        raise VenueRejection("relay payloads are for type PROXY")
    state = _state()
    with state.lock:
        nonce_now = state.relayer.nonce_of(_address_arg(), "PROXY")
    return json_response({"address": RELAY_ADDRESS, "nonce": str(nonce_now)})


@bp.get("/transaction")
def transaction_legacy():
    """GET /transaction?id= (legacy): a one-element list, camelCase."""
    state = _state()
    with state.lock:
        tx = state.relayer.transaction(request.args.get("id", ""))
    return json_response([legacy_json(tx)])


@bp.get("/transactions")
@relayer_auth
def transactions():
    """GET /transactions: the caller's transactions, newest first, camelCase (as the
    builder-relayer-client's ``getTransactions`` reads them)."""
    principal: Principal = g.principal
    state = _state()
    with state.lock:
        return json_response([legacy_json(tx) for tx in state.relayer.transactions_of(principal)])


@bp.get("/v1/account/transactions/<tx_id>")
@relayer_auth
def transaction_v1(tx_id: str):
    """GET /v1/account/transactions/<id>: one object, snake_case."""
    state = _state()
    with state.lock:
        return json_response(v1_json(state.relayer.transaction(tx_id)))


@bp.get("/deployed")
def deployed():
    """GET /deployed?address=<wallet>&type=WALLET: {deployed}."""
    state = _state()
    with state.lock:
        return json_response({"deployed": state.relayer.deployed(_address_arg())})


@bp.get("/relayer/api/keys")
@relayer_auth
def api_keys():
    """GET /relayer/api/keys: the Relayer API keys of the calling key's address."""
    principal: Principal = g.principal
    if principal.kind != "relayer_key":
        raise VenueRejection("relayer api keys are listed for a relayer key's address", 401)
    state = _state()
    with state.lock:
        return json_response(state.relayer.keys_of(principal.address))


def _session_signer(kind: str):
    try:
        body = json.loads(request.get_data(as_text=True) or "null")
    except ValueError as exc:
        raise VenueRejection(ERR_PAYLOAD) from exc
    principal: Principal = g.principal
    return json_response(_state().relayer_session_signer(
        principal, kind, body, request.headers.get("Idempotency-Key", "")))


@bp.post("/v1/session-signers/authorizations")
@relayer_auth
def authorize_session_signer():
    """POST /v1/session-signers/authorizations: {status, transactionId, transactionHash}."""
    return _session_signer("authorization")


@bp.post("/v1/session-signers/revocations")
@relayer_auth
def revoke_session_signer():
    """POST /v1/session-signers/revocations: {status, fenced, transactionId}."""
    return _session_signer("revocation")
