"""Session signers on the sandbox (ACCOUNTS.md §2.6): the relayer's
``/v1/session-signers/{authorizations,revocations}`` with ``Idempotency-Key``, the CLOB's
``GET /v1/user/session-signers``, orders signed by a session key in the session-signer
envelope, and a revocation that fences the key and cancels its open orders.

Bodies and signatures come from the app's own ``venue/accounts`` and ``venue/signing``
builders, as the product sends them; the official SDK's own flow is in
``test_relayer_sdk.py``.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal

import httpx
import pytest
from eth_account import Account

from devstack.venue import SandboxServer
from tests.devstack.venue.conftest import Control
from tests.devstack.venue.test_relayer import Relayer
from venue.accounts.approvals import required_approvals
from venue.accounts.batch import sign_batch
from venue.accounts.wallet_calls import authorize_session_signer_call, revoke_session_signer_call
from venue.models import ApiCreds, BuilderCreds, Side
from venue.order_signer import OrderSigner
from venue.signing.auth import builder_headers, l1_headers, l2_headers
from venue.signing.keys import OrderKey

AUTHORIZATIONS = "/v1/session-signers/authorizations"
REVOCATIONS = "/v1/session-signers/revocations"
LIFETIME = 4_315 * 3600  # what the official SDK asks for


class Clob:
    """Raw CLOB calls as one key (its L1-created credentials)."""

    def __init__(self, venue: SandboxServer, key: OrderKey) -> None:
        self.http = httpx.Client(base_url=venue.clob_url, timeout=10)
        self.key = key
        answer = self.http.post("/auth/api-key", headers=l1_headers(key.private_key, 137))
        assert answer.status_code == 200, answer.text
        data = answer.json()
        self.creds = ApiCreds(data["apiKey"], data["secret"], data["passphrase"], key.address)

    def get(self, path: str, **params: str) -> httpx.Response:
        return self.http.get(path, params=params or None,
                             headers=l2_headers(self.creds, "GET", path))

    def post_order(self, body: str) -> httpx.Response:
        return self.http.post("/order", content=body, headers=l2_headers(
            self.creds, "POST", "/order", body) | {"Content-Type": "application/json"})


class Sessions:
    """The owner's signed session-signer operations, sent with builder credentials."""

    def __init__(self, venue: SandboxServer, relayer: Relayer) -> None:
        self.relayer = relayer
        self.builder = BuilderCreds(*venue.state.config.dev_builder)

    def body(self, session: str, *, valid_until: int | None = None,
             scopes: list[str] | None = None, key: OrderKey | None = None) -> dict:
        relayer = self.relayer
        nonce = int(relayer.http.get("/nonce", params={"address": relayer.owner.address}
                                     ).json()["nonce"])
        deadline = int(time.time()) + 600
        call = (revoke_session_signer_call(relayer.wallet, session) if valid_until is None
                else authorize_session_signer_call(relayer.wallet, session, valid_until))
        body: dict = {"deadline": str(deadline), "nonce": str(nonce),
                      "sessionSignerAddress": session, "walletAddress": relayer.wallet,
                      "signature": sign_batch(key or relayer.owner, chain_id=137,
                                              wallet=relayer.wallet, nonce=nonce,
                                              deadline=deadline, calls=[call])}
        if valid_until is not None:
            body |= {"scopes": scopes or ["ALL"], "validUntil": str(valid_until)}
        return body

    def send(self, path: str, body: dict, idempotency_key: str | None = "op-1", *,
             builder: bool = True, creds: BuilderCreds | None = None) -> httpx.Response:
        text = json.dumps(body)
        headers = (builder_headers(creds or self.builder, "POST", path, text) if builder
                   else dict(self.relayer.headers))
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        return self.relayer.http.post(path, content=text,
                                      headers=headers | {"Content-Type": "application/json"})

    def wait(self, answer: httpx.Response) -> dict:
        assert answer.status_code == 200, answer.text
        return self.relayer.wait(answer.json()["transactionId"])


@pytest.fixture
def sessions(sandbox_venue: SandboxServer, control: Control) -> Sessions:
    """A deployed, approved and funded deposit wallet; the relayer steps every 0 s."""
    relayer = Relayer(sandbox_venue, control)
    relayer.switch(step_seconds="0")
    relayer.create()
    relayer.run([approval.call() for approval in required_approvals()])
    control.fund(relayer.wallet, "100")
    return Sessions(sandbox_venue, relayer)


def _error(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]


def _order(signer: OrderSigner, clob: Clob, token: str, price: str = "0.2") -> str:
    order = signer.limit(token, Side.BUY, Decimal(price), Decimal("10"),
                         tick_size=Decimal("0.01"), neg_risk=False)
    return order.body(clob.creds.api_key)


def test_authorization_is_idempotent_and_lists_the_key_on_the_clob(sessions, sandbox_venue):
    session = Account.create().address
    until = int(time.time()) + LIFETIME
    body = sessions.body(session, valid_until=until, scopes=["CLOB"])
    # a relayer key cannot authorize (the venue asks for builder credentials)
    assert _error(sessions.send(AUTHORIZATIONS, body, builder=False)) == (
        403, "session-signer authorization requires a builder API key")
    assert _error(sessions.send(AUTHORIZATIONS, body, None)) == (
        400, "Idempotency-Key header is required")

    first = sessions.send(AUTHORIZATIONS, body)
    assert first.status_code == 200, first.text
    assert first.json()["status"] == "SUBMITTED"
    done = sessions.wait(first)
    assert done["state"] == "STATE_CONFIRMED"
    replay = sessions.send(AUTHORIZATIONS, body)  # the same operation, answered again
    assert replay.json() == {"status": "REGISTERED",
                             "transactionId": first.json()["transactionId"],
                             "transactionHash": done["transaction_hash"]}
    other = sessions.send(AUTHORIZATIONS, body | {"scopes": ["ALL"]})
    assert _error(other) == (409, "Idempotency-Key was used with a different request")
    # an Idempotency-Key is its caller's: another builder's "op-1" is a new operation
    mine = BuilderCreds("builder-2", "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ=", "pass-2")
    sessions.relayer.switch(builder={"key": mine.api_key, "secret": mine.secret,
                                     "passphrase": mine.passphrase})
    second = Account.create().address
    theirs = sessions.send(AUTHORIZATIONS, sessions.body(second, valid_until=until), creds=mine)
    assert theirs.status_code == 200, theirs.text
    assert theirs.json()["transactionId"] != first.json()["transactionId"]
    sessions.wait(theirs)

    owner = Clob(sandbox_venue, sessions.relayer.owner)
    listed = owner.get("/v1/user/session-signers")
    assert listed.json() == {"wallet": sessions.relayer.wallet, "signers": sorted([
        {"address": session, "scopes": ["CLOB"], "valid_until": until},
        {"address": second, "scopes": ["ALL"], "valid_until": until}],
        key=lambda signer: signer["address"].lower())}
    stranger = Clob(sandbox_venue, OrderKey("0x" + Account.create().key.hex()))
    assert stranger.get("/v1/user/session-signers").status_code == 404


def test_authorization_refusals(sessions):
    session = Account.create().address
    now = int(time.time())
    bad_scope = sessions.body(session, valid_until=now + 60, scopes=["ALL", "CLOB"])
    assert _error(sessions.send(AUTHORIZATIONS, bad_scope, "a")) == (
        400, "scope ALL cannot be combined with another scope")
    unknown = sessions.body(session, valid_until=now + 60, scopes=["TRADE"])
    assert _error(sessions.send(AUTHORIZATIONS, unknown, "b"))[1].startswith(
        "scopes must be a non-empty list")
    too_long = sessions.body(session, valid_until=now + 200 * 86400)
    assert _error(sessions.send(AUTHORIZATIONS, too_long, "c")) == (
        400, "validUntil must lie in the future, at most 180 days ahead")
    stranger = OrderKey("0x" + Account.create().key.hex())
    forged = sessions.body(session, valid_until=now + 60, key=stranger)
    assert _error(sessions.send(AUTHORIZATIONS, forged, "d")) == (400, "invalid signature")
    stale = sessions.body(session, valid_until=now + 60) | {"nonce": "7"}
    assert _error(sessions.send(AUTHORIZATIONS, stale, "e")) == (400, "invalid signature")
    assert sessions.relayer.account()["wallet"]["session_signers"] == {}


def test_a_session_key_trades_until_revoked_and_revocation_cancels_its_orders(
        sessions, sandbox_venue, control):
    relayer = sessions.relayer
    session = OrderKey("0x" + Account.create().key.hex())
    sessions.wait(sessions.send(AUTHORIZATIONS, sessions.body(
        session.address, valid_until=int(time.time()) + LIFETIME, scopes=["CLOB"])))
    token = control.add_market("session-orders")["token_ids"][0]
    clob = Clob(sandbox_venue, session)  # the session key's own credentials
    enveloped = OrderSigner(session, 137, signature_type=3, funder=relayer.wallet,
                            session_key=True)
    placed = clob.post_order(_order(enveloped, clob, token))
    assert placed.status_code == 200 and placed.json()["status"] == "live", placed.text
    # the session key's plain ERC-7739 signature is not the owner's: refused
    plain = OrderSigner(session, 137, signature_type=3, funder=relayer.wallet)
    assert _error(clob.post_order(_order(plain, clob, token, "0.21"))) == (
        400, "invalid signature")

    relayer.switch(step_seconds="30")  # the chain is slow: the fence must not wait for it
    revoke = sessions.body(session.address)
    revoked = sessions.send(REVOCATIONS, revoke, "revoke-1",
                            builder=False)  # a revocation takes the owner's relayer key
    assert revoked.status_code == 200, revoked.text
    assert revoked.json() == {"status": "FENCED", "fenced": True,
                              "transactionId": revoked.json()["transactionId"]}
    order_id = placed.json()["orderID"]
    # a finished order's /data/order answer is empty, as the venue's: read the listing
    [listed] = clob.get("/data/orders", id=order_id).json()["data"]
    assert listed["status"] == "CANCELED"
    assert _error(clob.post_order(_order(enveloped, clob, token, "0.22"))) == (
        400, "invalid signature")
    wallet = relayer.account()["wallet"]
    assert wallet["fenced"] == [session.address.lower()]
    assert session.address.lower() in wallet["session_signers"]  # still on chain

    relayer.switch(step_seconds="0")
    relayer.wait(revoked.json()["transactionId"])
    replay = sessions.send(REVOCATIONS, revoke, "revoke-1", builder=False)
    assert replay.json()["status"] == "CONFIRMED"
    assert sessions.send(REVOCATIONS, sessions.body(session.address), "revoke-1",
                         builder=False).status_code == 409  # the nonce moved: not the same
    owner = Clob(sandbox_venue, relayer.owner)
    assert owner.get("/v1/user/session-signers").json()["signers"] == []
    wallet = relayer.account()["wallet"]
    assert wallet["session_signers"] == {} and wallet["fenced"] == []  # removed on chain


def test_an_expired_or_non_clob_session_key_is_refused(sessions, sandbox_venue, control):
    relayer = sessions.relayer
    token = control.add_market("session-scopes")["token_ids"][0]
    combos = OrderKey("0x" + Account.create().key.hex())
    sessions.wait(sessions.send(AUTHORIZATIONS, sessions.body(
        combos.address, valid_until=int(time.time()) + LIFETIME, scopes=["COMBOSRFQ"]), "x"))
    clob = Clob(sandbox_venue, combos)
    signer = OrderSigner(combos, 137, signature_type=3, funder=relayer.wallet, session_key=True)
    assert _error(clob.post_order(_order(signer, clob, token))) == (400, "invalid signature")

    brief = OrderKey("0x" + Account.create().key.hex())
    sessions.wait(sessions.send(AUTHORIZATIONS, sessions.body(
        brief.address, valid_until=int(time.time()) + 2), "y"))
    clob = Clob(sandbox_venue, brief)
    signer = OrderSigner(brief, 137, signature_type=3, funder=relayer.wallet, session_key=True)
    assert clob.post_order(_order(signer, clob, token)).status_code == 200
    time.sleep(2.5)
    assert _error(clob.post_order(_order(signer, clob, token, "0.21"))) == (
        400, "invalid signature")
