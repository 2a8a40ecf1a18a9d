"""The sandbox relayer's legacy PROXY and SAFE transactions (ACCOUNTS.md §5, §10): the
official SDK, given a grandfathered proxy or Safe, sends every required approval through
the sandbox and sees it CONFIRMED; the sandbox refuses what the venue refuses (not the
owner, a bad signature, a stale nonce, a second transaction in flight, a wrong factory,
another account's relayer key) and a reverting call fails the transaction with its reason,
changing nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from eth_account import Account

from devstack.venue.legacy_relay import RELAY_ADDRESS
from tests.devstack.venue.conftest import Control
from tests.sdk_env import sdk_result
from venue.accounts import (
    POLYGON,
    Call,
    proxy_wallet_address,
    required_approvals,
    safe_wallet_address,
)
from venue.accounts.legacy_relay import proxy_payload, safe_payload
from venue.models import BuilderCreds, RelayerApiKey
from venue.relayer import auth_headers
from venue.signing import OrderKey, compact_json

SDK_LEGACY_APPROVE = """
import dataclasses
from polymarket import BuilderApiKey, SecureClient
from polymarket._internal.actions.relayer.approvals import (
    _required_trading_approvals, build_missing_trading_approval_calls)
from polymarket._internal.environment import PRODUCTION_CONFIG, create_environment
from polymarket.models.trading import MissingTradingApprovals

# no node: the SDK's proxy gas estimate falls back to its default at once
config = dataclasses.replace(PRODUCTION_CONFIG, clob_url=payload["clob_url"],
                             relayer_url=payload["relayer_url"], relayer_poll_frequency_ms=50,
                             rpc_url="http://127.0.0.1:9")
environment = create_environment(name="sandbox", config=config)
client = SecureClient.create(private_key=payload["key"], wallet=payload["wallet"],
                             environment=environment, api_key=BuilderApiKey(*payload["builder"]))
erc20, erc1155 = _required_trading_approvals(config)
calls = build_missing_trading_approval_calls(MissingTradingApprovals(erc20=erc20,
                                                                     erc1155=erc1155))
outcome = [client.execute_transaction(calls=calls[:1], metadata="first").wait(),
           client.execute_transaction(calls=calls, metadata="approvals").wait()]
result = {"wallet_type": client.wallet_type, "calls": len(calls),
          "ids": [o.transaction_id for o in outcome]}
client.close()
"""

DERIVE = {1: proxy_wallet_address, 2: safe_wallet_address}
KIND = {1: "PROXY", 2: "SAFE"}


def _legacy(control: Control, signature_type: int) -> tuple[Any, str]:
    owner = Account.create()
    wallet = DERIVE[signature_type](owner.address, POLYGON)
    control.call("POST", "/legacy-wallets", {"wallet": wallet, "owner": owner.address,
                                             "signature_type": signature_type}, expect=200)
    return owner, wallet


@pytest.mark.parametrize("signature_type", [1, 2])
def test_the_official_sdk_approves_from_a_proxy_and_a_safe(sandbox_venue, control,
                                                            signature_type) -> None:
    control.call("POST", "/relayer", {"step_seconds": "0.05"}, expect=200)
    owner, wallet = _legacy(control, signature_type)
    result = sdk_result(SDK_LEGACY_APPROVE, {
        "key": owner.key.hex(), "wallet": wallet, "builder": list(
            sandbox_venue.state.config.dev_builder),
        "clob_url": sandbox_venue.clob_url, "relayer_url": sandbox_venue.relayer_url})
    assert result["wallet_type"] == {1: "POLY_PROXY", 2: "GNOSIS_SAFE"}[signature_type]
    for transaction_id in result["ids"]:  # the SDK waited for each to be CONFIRMED
        [tx] = control.get("/relayer/transaction", id=transaction_id)
        assert (tx["state"], tx["type"]) == ("STATE_CONFIRMED", KIND[signature_type])
        assert tx["proxyAddress"] == wallet
    account = control.call("GET", f"/accounts/{wallet}", expect=200)
    # every approval the SDK asked for is in place, from the wallet (not its owner)
    assert len(account["allowances"]) + len(account["operators"]) == result["calls"] >= 10
    assert control.get("/relayer/nonce", address=owner.address,
                       type=KIND[signature_type]) == {"nonce": "2"}
    assert control.call("GET", f"/accounts/{owner.address}", expect=200)["allowances"] == []


def _submit(control: Control, body: dict, auth: Any = None) -> Any:
    text = compact_json(body)
    auth = auth or _builder(control)
    return control.http.post("/relayer/submit", content=text,
                               headers=auth_headers(auth, "POST", "/submit", text))


def _builder(control: Control) -> Any:
    key, secret, passphrase = control.venue.state.config.dev_builder
    return BuilderCreds(api_key=key, secret=secret, passphrase=passphrase)


def _body(signature_type: int, key: OrderKey, wallet: str, calls: list[Call], nonce: int,
          relay: str | None = None) -> dict:
    if signature_type == 1:
        return proxy_payload(key, factory=POLYGON.proxy_factory, wallet=wallet, calls=calls,
                             nonce=nonce, relay=relay or _relay(), relay_hub=POLYGON.relay_hub)
    return safe_payload(key, chain_id=POLYGON.chain_id, multisend=POLYGON.safe_multisend,
                        wallet=wallet, calls=calls, nonce=nonce)


def _relay() -> str:
    return RELAY_ADDRESS


def _approve(spender: str) -> Call:
    approval = next(a for a in required_approvals(POLYGON) if a.method == "approve")
    return Call(target=approval.token, data="0x095ea7b3" + "00" * 12 + spender[2:].lower()
                + "ff" * 32)


@pytest.mark.parametrize("signature_type", [1, 2])
def test_the_sandbox_refuses_what_the_venue_refuses(sandbox_venue, control,
                                                   signature_type) -> None:
    control.call("POST", "/relayer", {"step_seconds": "30"}, expect=200)
    owner, wallet = _legacy(control, signature_type)
    key, stranger = OrderKey(owner.key), OrderKey(Account.create().key)
    calls = [_approve(POLYGON.standard_exchange)]

    def refused(body: dict, auth: Any = None, status: int = 400) -> str:
        answer = _submit(control, body, auth)
        assert answer.status_code == status, answer.text
        return answer.json()["error"]

    assert "is not the owner of" in refused(_body(signature_type, stranger, wallet, calls, 0))
    unknown = DERIVE[signature_type](stranger.address, POLYGON)
    assert "is not a known" in refused(_body(signature_type, stranger, unknown, calls, 0))
    forged = _body(signature_type, key, wallet, calls, 0)
    forged["signature"] = _body(signature_type, stranger, wallet, calls, 0)["signature"]
    assert refused(forged) == "invalid signature"
    assert refused(_body(signature_type, key, wallet, calls, 3)) == (
        "batch nonce 3 does not match on-chain nonce 0")
    other_key = control.call("POST", "/relayer", {"relayer_key_for": stranger.address},
                             expect=200)["relayer_key"]
    assert refused(_body(signature_type, key, wallet, calls, 0),
                   RelayerApiKey(key=other_key, address=stranger.address), 401) == (
        "invalid authorization")
    if signature_type == 1:
        wrong_to = dict(_body(1, key, wallet, calls, 0), to=POLYGON.safe_factory)
        assert refused(wrong_to) == "invalid 'to' field: must be proxy factory"
        assert "invalid relay" in refused(_body(1, key, wallet, calls, 0, relay=wallet))
        assert control.get("/relayer/relay-payload", address=owner.address, type="PROXY") == {
            "address": _relay(), "nonce": "0"}
    else:
        refund = _body(2, key, wallet, calls, 0)
        refund["signatureParams"] = dict(refund["signatureParams"], gasPrice="1")
        assert refused(refund) == "invalid transaction request payload"
    # the owner's own relayer key is accepted; a second one waits for the first
    own = control.call("POST", "/relayer", {"relayer_key_for": owner.address},
                       expect=200)["relayer_key"]
    first = _submit(control, _body(signature_type, key, wallet, calls, 0),
                    RelayerApiKey(key=own, address=owner.address))
    assert first.status_code == 200, first.text
    assert refused(_body(signature_type, key, wallet, calls, 0)) == "wallet has in-flight action"


@pytest.mark.parametrize("signature_type", [1, 2])
def test_a_reverting_call_fails_the_transaction_and_changes_nothing(sandbox_venue, control,
                                                                   signature_type) -> None:
    control.call("POST", "/relayer", {"step_seconds": "0"}, expect=200)
    owner, wallet = _legacy(control, signature_type)
    key = OrderKey(owner.key)
    calls = [_approve(POLYGON.standard_exchange),
             Call(target=POLYGON.collateral_token, data="0xdeadbeef")]
    sent = _submit(control, _body(signature_type, key, wallet, calls, 0))
    assert sent.status_code == 200, sent.text
    [tx] = control.get("/relayer/transaction", id=sent.json()["transactionID"])
    assert tx["state"] == "STATE_FAILED" and "selector 0xdeadbeef" in tx["errorMsg"]
    assert tx["type"] == KIND[signature_type]
    assert control.call("GET", f"/accounts/{wallet}", expect=200)["allowances"] == []
    assert control.get("/relayer/nonce", address=owner.address,
                       type=KIND[signature_type]) == {"nonce": "0"}
    # the same nonce runs once the calls are good
    good = _submit(control, _body(signature_type, key, wallet, calls[:1], 0))
    [tx] = control.get("/relayer/transaction", id=good.json()["transactionID"])
    assert tx["state"] == "STATE_CONFIRMED", tx
    assert json.loads(tx["data"])[0]["target"].lower() == POLYGON.collateral_token.lower()
