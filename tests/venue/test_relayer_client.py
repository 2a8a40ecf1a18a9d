"""The relayer client over real HTTP against a scripted relayer: auth headers, both endpoint
generations, the SDKs' submit retries (nonce mismatch, in-flight, 429) and what is never
resubmitted (5xx, other 400s), polling to a final state; sync and under trio."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import trio
from eth_keys import keys

from tests.local_http import serving
from venue.accounts import Call, batch_digest, required_approvals
from venue.accounts.contracts import POLYGON
from venue.client import AsyncVenueClient, VenueClient
from venue.config import VenueConfig
from venue.errors import VenueRejected, VenueTimeout, VenueUnavailable
from venue.models import BuilderCreds, RelayerApiKey
from venue.relayer import (
    RelayerTransactionFailed,
    await_final,
    create_wallet,
    wallet_batch,
)
from venue.signing.keys import OrderKey

OWNER = OrderKey("0x" + "11" * 32)
WALLET = "0x" + "ab" * 20
BUILDER = BuilderCreds(api_key="builder-key",
                       secret=base64.urlsafe_b64encode(b"s" * 32).decode(),
                       passphrase="pass")
CALLS = tuple(approval.call() for approval in required_approvals()[:2])


class Relayer:
    """A scripted relayer: each route answers from its queue (the last answer repeats)."""

    def __init__(self) -> None:
        self.script: dict[str, list[tuple[int, Any]]] = {}
        self.seen: list[tuple[str, str, dict[str, list[str]], dict[str, str], Any]] = []
        self.lock = threading.Lock()

    def answer(self, route: str, *answers: tuple[int, Any]) -> None:
        self.script[route] = list(answers)

    def submits(self) -> list[dict[str, Any]]:
        return [body for method, path, _q, _h, body in self.seen if path == "/relayer/submit"]

    def handler(self) -> type[BaseHTTPRequestHandler]:
        relayer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                url = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                with relayer.lock:
                    relayer.seen.append((self.command, url.path, parse_qs(url.query),
                                         dict(self.headers), body))
                    queue = relayer.script.get(url.path, [(404, {"error": "not found"})])
                    status, answer = queue.pop(0) if len(queue) > 1 else queue[0]
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def relayer() -> Iterator[tuple[Relayer, VenueConfig]]:
    fake = Relayer()
    with serving(fake.handler()) as url:
        yield fake, VenueConfig.for_sandbox(url, timeout=2, max_retries=0)


def _signer_of(body: dict[str, Any]) -> str:
    params = body["depositWalletParams"]
    calls = [Call(target=c["target"], data=c["data"], value=int(c["value"]))
             for c in params["calls"]]
    digest = batch_digest(chain_id=137, wallet=params["depositWallet"], nonce=int(body["nonce"]),
                          deadline=int(params["deadline"]), calls=calls)
    raw = bytes.fromhex(body["signature"][2:])
    signature = keys.Signature(raw[:64] + bytes([raw[64] - 27]))
    return signature.recover_public_key_from_msg_hash(digest).to_checksum_address()


def _batch(client: VenueClient) -> Any:
    return client.run_steps(wallet_batch(BUILDER, OWNER, chain_id=137,
                                         factory=POLYGON.deposit_wallet_factory, wallet=WALLET,
                                         calls=CALLS, interval=0))


def test_wallet_batch_signs_once_and_resubmits_the_same_bytes_on_a_busy_wallet(relayer
                                                                              ) -> None:
    fake, config = relayer
    fake.answer("/relayer/v1/account/transactions/params",
                (200, {"address": OWNER.address, "nonce": "3"}),
                (200, {"address": OWNER.address, "nonce": "6"}))
    fake.answer("/relayer/submit",
                (400, {"error": "wallet has in-flight action"}),
                (429, {"error": "quota exceeded"}),
                (200, {"transactionID": "tx-1", "state": "STATE_NEW"}))
    with VenueClient(config) as client:
        submitted = _batch(client)
    assert (submitted.transaction_id, submitted.state) == ("tx-1", "STATE_NEW")
    # A busy wallet and quota resubmit the very same bytes: never a second signature
    # (the in-flight batch may be this one, sent before; issue 26).
    bodies = fake.submits()
    assert len(bodies) == 3 and bodies[0] == bodies[1] == bodies[2]
    assert bodies[0]["nonce"] == "3"
    for body in bodies:
        assert body["type"] == "WALLET" and body["from"] == OWNER.address
        assert body["to"] == POLYGON.deposit_wallet_factory
        assert body["depositWalletParams"]["depositWallet"] == WALLET
        assert _signer_of(body) == OWNER.address
    # Every authenticated request carries the builder HMAC over the path below /relayer.
    for method, path, _query, headers, body in fake.seen:
        assert headers["POLY_BUILDER_API_KEY"] == "builder-key"
        message = headers["POLY_BUILDER_TIMESTAMP"] + method + path.removeprefix("/relayer")
        if body is not None:
            message += json.dumps(body, separators=(",", ":"))
        expected = base64.urlsafe_b64encode(hmac.new(
            base64.urlsafe_b64decode(BUILDER.secret), message.encode(), hashlib.sha256
        ).digest()).decode()
        assert headers["POLY_BUILDER_SIGNATURE"] == expected


def test_quota_is_retried_but_a_server_error_is_never_resubmitted(relayer) -> None:
    fake, config = relayer
    fake.answer("/relayer/v1/account/transactions/params", (200, {"nonce": "0"}))
    fake.answer("/relayer/submit", (429, {"error": "quota exceeded"}),
                (200, {"transactionID": "tx-2", "state": "STATE_NEW"}))
    with VenueClient(config) as client:
        assert _batch(client).transaction_id == "tx-2"
        assert len(fake.submits()) == 2
        fake.seen.clear()
        # A 500 may have been acted on: it surfaces once, for the caller to reconcile.
        fake.answer("/relayer/submit", (500, {"error": "internal error"}))
        with pytest.raises(VenueUnavailable):
            _batch(client)
        assert len(fake.submits()) == 1


def test_documented_rejections_and_a_moved_nonce_are_never_re_signed(relayer) -> None:
    fake, config = relayer
    fake.answer("/relayer/v1/account/transactions/params", (200, {"nonce": "9"}))
    with VenueClient(config) as client:
        for message in ("invalid 'to' field: must be deposit wallet factory",
                        "batch nonce 9 does not match on-chain nonce 4",
                        "batch nonce 3 does not match on-chain nonce 5"):
            fake.seen.clear()
            fake.answer("/relayer/submit", (400, {"error": message}))
            with pytest.raises(VenueRejected, match=message.split(":")[0]):
                _batch(client)
            # the caller decides (it alone knows whether an earlier batch may still run)
            assert len(fake.submits()) == 1
        fake.answer("/relayer/submit", (401, {"error": "invalid authorization"}))
        with pytest.raises(VenueRejected, match="invalid authorization"):
            _batch(client)


def test_wallet_create_with_a_relayer_api_key(relayer) -> None:
    fake, config = relayer
    fake.answer("/relayer/submit", (200, {"transactionID": "tx-c", "state": "STATE_NEW"}))
    key = RelayerApiKey(key="rk-uuid", address=OWNER.address)
    with VenueClient(config) as client:
        done = client.run_steps(create_wallet(key, owner=OWNER.address,
                                              factory=POLYGON.deposit_wallet_factory))
    assert done.transaction_id == "tx-c"
    (_method, _path, _query, headers, body), = fake.seen
    assert body == {"type": "WALLET-CREATE", "from": OWNER.address,
                    "to": POLYGON.deposit_wallet_factory, "metadata": ""}
    assert (headers["RELAYER_API_KEY"], headers["RELAYER_API_KEY_ADDRESS"]) == (
        "rk-uuid", OWNER.address)
    assert "rk-uuid" not in repr(key)


def test_polling_both_generations_to_a_final_state(relayer) -> None:
    fake, config = relayer
    fake.answer("/relayer/v1/account/transactions/tx-1",
                (200, {"transaction_id": "tx-1", "state": "STATE_NEW"}),
                (200, {"transaction_id": "tx-1", "state": "STATE_MINED"}),
                (200, {"transaction_id": "tx-1", "state": "STATE_CONFIRMED",
                       "transaction_hash": "0x" + "cd" * 32}))
    fake.answer("/relayer/transaction",
                (200, [{"transactionID": "tx-2", "state": "STATE_FAILED",
                        "errorMsg": "execution reverted"}]))
    fake.answer("/relayer/deployed", (200, {"deployed": True}))
    fake.answer("/relayer/nonce", (200, {"nonce": "31"}))
    with VenueClient(config) as client:
        confirmed = client.run_steps(await_final("tx-1", BUILDER, interval=0))
        assert confirmed.transaction_hash == "0x" + "cd" * 32
        with pytest.raises(RelayerTransactionFailed, match="execution reverted") as failed:
            client.run_steps(await_final("tx-2", interval=0))
        assert failed.value.transaction.state == "STATE_FAILED"
        fake.answer("/relayer/v1/account/transactions/tx-3",
                    (200, {"transaction_id": "tx-3", "state": "STATE_MINED"}))
        with pytest.raises(VenueTimeout, match="still STATE_MINED"):
            client.run_steps(await_final("tx-3", BUILDER, max_polls=3, interval=0))
        assert client.relayer.deployed(WALLET) is True
        assert client.relayer.nonce(OWNER.address) == 31
    deployed_query = next(q for _m, p, q, _h, _b in fake.seen if p == "/relayer/deployed")
    assert deployed_query == {"address": [WALLET], "type": ["WALLET"]}


def test_the_callers_transactions_are_listed_with_their_signatures(relayer) -> None:
    fake, config = relayer
    fake.answer("/relayer/transactions", (200, [
        {"transactionID": "tx-9", "state": "STATE_CONFIRMED", "nonce": "4",
         "signature": "0x" + "ee" * 65, "transactionHash": "0x" + "cd" * 32, "type": "SAFE"},
        {"transactionID": "tx-8", "state": "STATE_FAILED", "errorMsg": "reverted",
         "nonce": "3", "signature": ""}]))
    with VenueClient(config) as client:
        newest, failed = client.relayer.transactions(BUILDER)
    assert (newest.transaction_id, newest.nonce, newest.signature) == (
        "tx-9", "4", "0x" + "ee" * 65)
    assert newest.transaction_hash == "0x" + "cd" * 32
    assert (failed.state, failed.error, failed.signature) == ("STATE_FAILED", "reverted", None)
    method, _path, _query, headers, _body = next(
        seen for seen in fake.seen if seen[1] == "/relayer/transactions")
    assert method == "GET" and "POLY_BUILDER_SIGNATURE" in {k.upper() for k in headers}
    fake.answer("/relayer/transactions", (200, [{"state": "STATE_NEW"}]))
    with VenueClient(config) as client, pytest.raises(VenueUnavailable, match="lacks its id"):
        client.relayer.transactions(BUILDER)


def test_the_same_flow_under_trio(relayer) -> None:
    fake, config = relayer
    fake.answer("/relayer/v1/account/transactions/params", (200, {"nonce": "7"}))
    fake.answer("/relayer/submit", (400, {"error": "wallet busy: active action"}),
                (200, {"transactionID": "tx-t", "state": "STATE_NEW"}))
    fake.answer("/relayer/v1/account/transactions/tx-t",
                (200, {"transaction_id": "tx-t", "state": "STATE_CONFIRMED"}))

    async def main() -> str:
        client = AsyncVenueClient(config)
        try:
            sent = await client.run_steps(wallet_batch(
                BUILDER, OWNER, chain_id=137, factory=POLYGON.deposit_wallet_factory,
                wallet=WALLET, calls=CALLS, interval=0))
            done = await client.run_steps(await_final(sent.transaction_id, BUILDER, interval=0))
            return done.state
        finally:
            await client.aclose()

    assert trio.run(main) == "STATE_CONFIRMED"
    assert [body["nonce"] for body in fake.submits()] == ["7", "7"]
