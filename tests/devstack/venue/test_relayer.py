"""The sandbox relayer over real HTTP: WALLET-CREATE, WALLET batches, every rejection, the
transaction states, simulated execution, and the CLOB's balance/allowance cache.

Bodies are built with the app's own ``venue/accounts`` builders, as the product sends them.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from typing import Any

import httpx
import pytest
from eth_account import Account
from py_clob_client_v2.client import ClobClient
from py_clob_client_v2.clob_types import AssetType, BalanceAllowanceParams

from devstack.venue import SandboxServer
from tests.devstack.venue.conftest import Control
from venue.accounts.approvals import MAX_UINT256, required_approvals
from venue.accounts.batch import Call, sign_batch
from venue.accounts.contracts import POLYGON
from venue.accounts.derivation import beacon_deposit_wallet_address
from venue.accounts.relayer_payloads import wallet_batch_payload, wallet_create_payload
from venue.accounts.wallet_calls import (
    authorize_session_signer_call,
    redeem_call,
    transfer_call,
    wrap_call,
)
from venue.signing.keys import OrderKey

FACTORY = POLYGON.deposit_wallet_factory
EXCHANGE = POLYGON.standard_exchange


class Relayer:
    """An owner key, its relayer key, and calls to the sandbox relayer."""

    def __init__(self, venue: SandboxServer, control: Control) -> None:
        self.http = httpx.Client(base_url=venue.relayer_url, timeout=10)
        self.control = control
        self.owner = OrderKey("0x" + Account.create().key.hex())
        self.wallet = beacon_deposit_wallet_address(self.owner.address)
        self.key = self.switch(relayer_key_for=self.owner.address)["relayer_key"]
        self.headers = {"RELAYER_API_KEY": self.key,
                        "RELAYER_API_KEY_ADDRESS": self.owner.address}

    def switch(self, **body: Any) -> dict:
        return self.control.call("POST", "/relayer", body, expect=200)

    def submit(self, body: dict, headers: dict | None = None) -> httpx.Response:
        return self.http.post("/submit", json=body,
                              headers=self.headers if headers is None else headers)

    def state(self, tx_id: str) -> dict:
        return self.http.get(f"/v1/account/transactions/{tx_id}", headers=self.headers).json()

    def wait(self, tx_id: str, final: str = "STATE_CONFIRMED") -> dict:
        for _ in range(100):
            answer = self.state(tx_id)
            if answer["state"] in ("STATE_CONFIRMED", "STATE_FAILED", "STATE_INVALID"):
                assert answer["state"] == final, answer
                return answer
            time.sleep(0.05)
        raise AssertionError(f"{tx_id} stayed {answer}")

    def create(self) -> dict:
        response = self.submit(wallet_create_payload(self.owner.address, FACTORY))
        assert response.status_code == 200, response.text
        return self.wait(response.json()["transactionID"])

    def batch(self, calls: list[Call], *, nonce: int | None = None, key: OrderKey | None = None,
              deadline: int | None = None, session: bool = False) -> dict:
        key = key or self.owner
        if nonce is None:
            nonce = int(self.http.get("/nonce", params={"address": key.address,
                                                        "type": "WALLET"}).json()["nonce"])
        deadline = deadline or int(time.time()) + 600
        signature = sign_batch(key, chain_id=137, wallet=self.wallet, nonce=nonce,
                               deadline=deadline, calls=calls, session_signer=session)
        return wallet_batch_payload(signer=key.address, factory=FACTORY, wallet=self.wallet,
                                    nonce=nonce, deadline=deadline, calls=calls,
                                    signature=signature)

    def run(self, calls: list[Call], final: str = "STATE_CONFIRMED", **kwargs: Any) -> dict:
        response = self.submit(self.batch(calls, **kwargs))
        assert response.status_code == 200, response.text
        return self.wait(response.json()["transactionID"], final)

    def account(self, address: str | None = None) -> dict:
        return self.control.call("GET", f"/accounts/{address or self.wallet}", expect=200)


@pytest.fixture
def relayer(sandbox_venue: SandboxServer, control: Control) -> Relayer:
    """A fresh owner with a Relayer API key; the relayer steps every 0 s."""
    client = Relayer(sandbox_venue, control)
    client.switch(step_seconds="0")
    return client


@pytest.fixture
def deployed(relayer: Relayer) -> Relayer:
    """The owner's deposit wallet, deployed and CONFIRMED."""
    relayer.create()
    return relayer


def _error(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]


def test_wallet_create_moves_through_the_states_and_registers_at_confirmed(relayer):
    relayer.switch(step_seconds="0.4")
    response = relayer.submit(wallet_create_payload(relayer.owner.address, FACTORY, "hi"))
    assert response.status_code == 200
    assert response.json()["state"] == "STATE_NEW"
    tx_id = response.json()["transactionID"]
    deployed = {"address": relayer.wallet, "type": "WALLET"}
    assert relayer.http.get("/deployed", params=deployed).json() == {"deployed": False}
    assert relayer.state(tx_id)["state"] == "STATE_NEW"
    assert _error(relayer.submit(wallet_create_payload(relayer.owner.address, FACTORY))) == (
        400, "wallet has in-flight action")

    seen = []
    while not seen or seen[-1] != "STATE_CONFIRMED":
        state = relayer.state(tx_id)["state"]
        if state == "STATE_MINED" and "STATE_MINED" not in seen:
            # deployed, but the relayer's registry is not updated: batches must wait
            assert relayer.http.get("/deployed", params=deployed).json() == {"deployed": True}
            early = relayer.submit(relayer.batch([required_approvals()[0].call()]))
            assert early.status_code == 400 and "wallet registration error" in early.text
        if not seen or seen[-1] != state:
            seen.append(state)
        time.sleep(0.05)
    assert seen == ["STATE_NEW", "STATE_EXECUTED", "STATE_MINED", "STATE_CONFIRMED"]
    legacy = relayer.http.get("/transaction", params={"id": tx_id}).json()
    assert legacy[0]["transactionID"] == tx_id and legacy[0]["type"] == "WALLET-CREATE"
    assert legacy[0]["proxyAddress"] == relayer.wallet and legacy[0]["metadata"] == "hi"
    assert legacy[0]["transactionHash"].startswith("0x")
    assert relayer.account()["wallet"]["owners"] == [relayer.owner.address.lower()]
    again = relayer.submit(wallet_create_payload(relayer.owner.address, FACTORY))
    assert _error(again) == (400, f"deposit wallet {relayer.wallet} already deployed")


def _owner_clob(relayer: Relayer, venue: SandboxServer) -> ClobClient:
    """The owner's CLOB client (L2 creds bound to the owner EOA, funder the wallet)."""
    client = ClobClient(venue.clob_url, chain_id=137, key=relayer.owner.private_key,
                        signature_type=3, funder=relayer.wallet)
    client.set_api_creds(client.create_or_derive_api_key())
    return client


def test_approvals_batch_sets_every_approval_and_the_cache_sees_them_after_update(
        deployed, sandbox_venue):
    owner = _owner_clob(deployed, sandbox_venue)
    params = BalanceAllowanceParams(asset_type=AssetType.COLLATERAL, signature_type=3)
    before = owner.get_balance_allowance(params)
    assert before["allowances"][EXCHANGE] == "0"

    done = deployed.run([approval.call() for approval in required_approvals()])
    assert done["transaction_hash"].startswith("0x")
    params_v1 = deployed.http.get("/v1/account/transactions/params",
                                  params={"address": deployed.owner.address, "type": "WALLET"},
                                  headers=deployed.headers).json()
    assert params_v1 == {"address": deployed.owner.address, "nonce": "1"}
    account = deployed.account()
    assert len(account["allowances"]) == 7 and len(account["operators"]) == 10
    assert all(a["amount"] == str(MAX_UINT256) for a in account["allowances"])
    assert owner.get_balance_allowance(params)["allowances"][EXCHANGE] == "0"
    owner.update_balance_allowance(params)
    assert owner.get_balance_allowance(params)["allowances"][EXCHANGE] == str(
        MAX_UINT256)


def test_funding_reaches_the_cached_balance_only_after_update(deployed, control,
                                                              sandbox_venue):
    owner = _owner_clob(deployed, sandbox_venue)
    params = BalanceAllowanceParams(asset_type=AssetType.COLLATERAL, signature_type=3)
    control.fund(deployed.wallet, "25", seen=False)
    assert owner.get_balance_allowance(params)["balance"] == "0"
    owner.update_balance_allowance(params)
    assert owner.get_balance_allowance(params)["balance"] == "25000000"
    control.fund(deployed.wallet, "5", seen=True)  # a deposit the cache already picked up
    assert owner.get_balance_allowance(params)["balance"] == "30000000"


def test_submit_rejections_carry_the_venues_texts(deployed):
    approve = required_approvals()[0].call()
    wrong_to = deployed.batch([approve]) | {"to": EXCHANGE}
    assert _error(deployed.submit(wrong_to)) == (
        400, "invalid 'to' field: must be deposit wallet factory")
    assert _error(deployed.submit(deployed.batch([approve], nonce=3))) == (
        400, "batch nonce 3 does not match on-chain nonce 0")
    forged = deployed.batch([approve]) | {"signature": deployed.batch(
        [approve], key=OrderKey("0x" + Account.create().key.hex()))["signature"]}
    assert _error(deployed.submit(forged)) == (400, "invalid signature")
    expired = deployed.batch([approve], deadline=int(time.time()) - 1)
    assert _error(deployed.submit(expired)) == (400, "deadline expired")
    far = deployed.batch([approve], deadline=int(time.time()) + 3600)
    assert _error(deployed.submit(far))[1].startswith("deadline too far in the future")
    assert _error(deployed.submit({"type": "SAFE", "from": deployed.owner.address,
                                   "to": FACTORY})) == (400, "invalid transaction request payload")

    deployed.switch(step_seconds="30")
    first = deployed.submit(deployed.batch([approve]))
    assert first.status_code == 200
    assert _error(deployed.submit(deployed.batch([approve], nonce=1))) == (
        400, "wallet has in-flight action")


def test_relayer_auth_and_switches(deployed, control):
    body = deployed.batch([required_approvals()[0].call()])
    assert _error(deployed.submit(body, headers={})) == (401, "invalid authorization")
    wrong = deployed.headers | {"RELAYER_API_KEY_ADDRESS": Account.create().address}
    assert _error(deployed.submit(body, headers=wrong)) == (401, "invalid authorization")
    # a relayer key operates only its own address's wallet
    stranger = Account.create().address
    other_key = deployed.switch(relayer_key_for=stranger)["relayer_key"]
    other = {"RELAYER_API_KEY": other_key, "RELAYER_API_KEY_ADDRESS": stranger}
    assert _error(deployed.submit(body, headers=other)) == (401, "invalid authorization")
    assert deployed.http.get("/relayer/api/keys", headers=other).json()[0]["apiKey"] == other_key

    deployed.switch(quota=True)
    assert _error(deployed.submit(body)) == (429, "quota exceeded")
    deployed.switch(quota=False, down=True)
    assert deployed.submit(body).status_code == 503
    assert deployed.http.get("/nonce", params={"address": deployed.owner.address}
                             ).status_code == 503
    assert deployed.http.get("/transaction", params={"id": "unknown"}).status_code == 503
    assert deployed.http.get("/deployed", params={"address": deployed.wallet}
                             ).status_code == 503
    deployed.switch(down=False)
    assert deployed.submit(body).status_code == 200


def _builder_headers(key: str, secret: str, passphrase: str, method: str, path: str,
                     body: str, timestamp: str | None = None) -> dict[str, str]:
    timestamp = timestamp or str(int(time.time()))
    digest = hmac.new(base64.urlsafe_b64decode(secret),
                      f"{timestamp}{method}{path}{body}".encode(), hashlib.sha256).digest()
    return {"POLY_BUILDER_API_KEY": key, "POLY_BUILDER_PASSPHRASE": passphrase,
            "POLY_BUILDER_TIMESTAMP": timestamp,
            "POLY_BUILDER_SIGNATURE": base64.urlsafe_b64encode(digest).decode()}


def test_builder_hmac_dev_triple_and_registered_credentials(relayer, sandbox_venue):
    import json

    key, secret, passphrase = sandbox_venue.state.config.dev_builder
    body = json.dumps(wallet_create_payload(relayer.owner.address, FACTORY))
    headers = _builder_headers(key, secret, passphrase, "POST", "/submit", body)
    bad = headers | {"POLY_BUILDER_SIGNATURE": headers["POLY_BUILDER_SIGNATURE"][::-1]}
    plain = {"Content-Type": "application/json"}
    refused = relayer.http.post("/submit", content=body, headers=bad | plain)
    assert _error(refused) == (401, "invalid authorization")
    # a correctly signed but stale (or future) timestamp is refused: 60 s either way
    for skew in (-90, 90):
        stale = _builder_headers(key, secret, passphrase, "POST", "/submit", body,
                                 str(int(time.time()) + skew))
        refused = relayer.http.post("/submit", content=body, headers=stale | plain)
        assert _error(refused) == (401, "invalid authorization")
    # milliseconds (the docs' remote-signing sample) are read as such
    in_ms = _builder_headers(key, secret, passphrase, "GET", "/v1/account/transactions/params",
                             "", str(int(time.time() * 1000)))
    params = relayer.http.get("/v1/account/transactions/params", headers=in_ms,
                              params={"address": relayer.owner.address, "type": "WALLET"})
    assert params.status_code == 200, params.text
    answer = relayer.http.post("/submit", content=body, headers=headers | plain)
    assert answer.status_code == 200, answer.text
    relayer.wait(answer.json()["transactionID"])

    mine = ("builder-1", base64.urlsafe_b64encode(b"s" * 32).decode(), "pass-1")
    relayer.switch(builder=dict(zip(("key", "secret", "passphrase"), mine, strict=True)))
    other = OrderKey("0x" + Account.create().key.hex())
    body = json.dumps(wallet_create_payload(other.address, FACTORY))
    answer = relayer.http.post("/submit", content=body,
                               headers=_builder_headers(*mine, "POST", "/submit", body) | plain)
    assert answer.status_code == 200, answer.text


def test_armed_failures_end_failed_or_invalid_with_the_message(deployed):
    deployed.switch(fail_next={"state": "INVALID", "message": "simulated revert"})
    response = deployed.submit(deployed.batch([required_approvals()[0].call()]))
    done = deployed.wait(response.json()["transactionID"], "STATE_INVALID")
    assert done["error_msg"] == "simulated revert"
    legacy = deployed.http.get("/transaction", params={"id": done["transaction_id"]}).json()
    assert legacy[0]["errorMsg"] == "simulated revert"
    # the batch never ran: the nonce is unchanged and the wallet free again
    deployed.switch(fail_next={"state": "FAILED", "message": "out of gas"})
    failed = deployed.run([required_approvals()[0].call()], "STATE_FAILED", nonce=0)
    assert failed["error_msg"] == "out of gas"
    assert deployed.account()["wallet"]["nonce"] == 0


def test_an_unknown_call_fails_the_whole_batch_and_changes_nothing(deployed):
    approve = required_approvals()[0].call()
    unknown = Call(target=EXCHANGE, data="0xdeadbeef")
    failed = deployed.run([approve, unknown], "STATE_FAILED")
    assert failed["error_msg"] == f"unsupported call to {EXCHANGE}: selector 0xdeadbeef"
    account = deployed.account()
    assert account["allowances"] == [] and account["wallet"]["nonce"] == 0


def test_wrap_transfer_and_redeem_through_the_adapter(deployed, control, sandbox_venue):
    control.call("POST", "/fund", {"address": deployed.wallet, "usdc_e": "10"}, expect=200)
    onramp_approval = Call(target=POLYGON.usdc_e, data="0x095ea7b3" + bytes(12).hex()
                           + POLYGON.collateral_onramp[2:].lower() + f"{10_000_000:064x}")
    deployed.run([onramp_approval, wrap_call(deployed.wallet, 10_000_000)])
    assert deployed.account()["usdc_e"] == "0"
    assert control.balances(deployed.wallet)["pusd"] == "10"

    outside = Account.create().address
    deployed.run([transfer_call(POLYGON.collateral_token, outside, 4_000_000)])
    assert control.balances(deployed.wallet)["pusd"] == "6"
    too_much = deployed.run([transfer_call(POLYGON.collateral_token, outside, 7_000_000)],
                            "STATE_FAILED")
    assert too_much["error_msg"] == "ERC20: transfer amount exceeds balance"

    market = control.add_market("relayer-redeem")
    control.call("POST", "/fund", {"address": deployed.wallet, "token_id": market["token_ids"][0],
                                   "shares": "3"}, expect=200)
    control.call("POST", f"/markets/{market['condition_id']}/resolve", {"winner": 0}, expect=200)
    redeem = redeem_call(market["condition_id"], neg_risk=False)
    refused = deployed.run([redeem], "STATE_FAILED")
    assert refused["error_msg"] == "ERC1155: caller is not owner nor approved"
    ctf_to_adapter = next(a for a in required_approvals()
                          if a.spender == POLYGON.collateral_adapter and a.method != "approve")
    deployed.run([ctf_to_adapter.call(), redeem])
    assert control.balances(deployed.wallet)["pusd"] == "9"


def test_calls_to_the_v1_neg_risk_adapter_are_refused_and_ours_use_the_current_one(
        deployed, control):
    """ACCOUNTS.md §11: relayer calls to the v1 NegRiskAdapter are refused since 2026-07-17.
    The product's neg-risk redemption and its approvals never name it."""
    from devstack.venue.config import NEG_RISK_ADAPTER_V1
    from devstack.venue.relay import ERR_V1_ADAPTER

    market = control.add_market("relayer-neg-risk", neg_risk=True)
    redeem = redeem_call(market["condition_id"], neg_risk=True)
    through_v1 = Call(target=NEG_RISK_ADAPTER_V1, data=redeem.data)
    assert _error(deployed.submit(deployed.batch([through_v1]))) == (400, ERR_V1_ADAPTER)
    approve = required_approvals()[0].call()
    assert _error(deployed.submit(deployed.batch([approve, through_v1]))) == (
        400, ERR_V1_ADAPTER)  # the whole batch, not the rest of it
    assert redeem.target == POLYGON.neg_risk_collateral_adapter
    assert NEG_RISK_ADAPTER_V1.lower() not in {
        a.spender.lower() for a in required_approvals()}  # py-sdk stopped approving it
    deployed.run([approve])  # the wallet's nonce was not used by the refusals


def test_a_session_signer_signs_batches_in_the_envelope(deployed):
    session = OrderKey("0x" + Account.create().key.hex())
    until = int(time.time()) + 3600
    deployed.run([authorize_session_signer_call(deployed.wallet, session.address, until)])
    nonce = deployed.http.get("/nonce", params={"address": session.address}).json()
    assert nonce == {"nonce": "1"}
    session_key = deployed.switch(relayer_key_for=deployed.owner.address)["relayer_key"]
    assert session_key
    plain = deployed.batch([required_approvals()[0].call()], key=session)
    assert _error(deployed.submit(plain)) == (400, "invalid signature")
    wrapped = deployed.batch([required_approvals()[0].call()], key=session, session=True)
    answer = deployed.submit(wrapped)
    assert answer.status_code == 200, answer.text
    deployed.wait(answer.json()["transactionID"])
    # a session key may not manage the wallet's own signers
    revoke = authorize_session_signer_call(deployed.wallet, Account.create().address, until)
    refused = deployed.run([revoke], "STATE_FAILED", key=session, session=True)
    assert refused["error_msg"] == "DepositWallet: owner only"


def test_the_callers_transactions_are_listed_newest_first_with_their_signatures(
        deployed, control):
    first = deployed.run([required_approvals()[0].call()])
    second = deployed.submit(deployed.batch([required_approvals()[1].call()]))
    assert second.status_code == 200, second.text
    deployed.wait(second.json()["transactionID"])
    listed = deployed.http.get("/transactions", headers=deployed.headers)
    assert listed.status_code == 200
    ids = [tx["transactionID"] for tx in listed.json()]
    assert ids[:2] == [second.json()["transactionID"], first["transaction_id"]]
    newest = listed.json()[0]
    assert newest["state"] == "STATE_CONFIRMED" and newest["nonce"] == "1"
    assert newest["signature"].startswith("0x") and newest["type"] == "WALLET"
    # another key's caller sees none of them; no credentials: refused
    stranger = OrderKey("0x" + Account.create().key.hex())
    key = control.call("POST", "/relayer", {"relayer_key_for": stranger.address},
                       expect=200)["relayer_key"]
    other_headers = {"RELAYER_API_KEY": key, "RELAYER_API_KEY_ADDRESS": stranger.address}
    assert deployed.http.get("/transactions", headers=other_headers).json() == []
    assert deployed.http.get("/transactions").status_code == 401
