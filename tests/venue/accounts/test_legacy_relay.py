"""The relayer's legacy PROXY and SAFE transactions against the official SDK, byte for byte:
the SDK's own signed-payload builders run with a relayer that answers the nonce (and, for a
proxy, the relay address), and our ``legacy_batch`` steps fed the same answers must ask the
same endpoints and submit the same body, signature included."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.sdk_env import SDK_CONFIG, sdk_result
from tests.venue.accounts.conftest import KEYS, OWNERS, TABLES, contracts_json
from venue.accounts import Call, required_approvals
from venue.accounts.legacy_relay import (
    SAFE_DELEGATECALL,
    proxy_calldata,
    safe_transaction,
    safe_tx_hash,
)
from venue.models import RelayerApiKey, RelayerTransaction
from venue.relayer import legacy_batch

SDK_LEGACY = SDK_CONFIG + """
from types import SimpleNamespace
from eth_account import Account
from polymarket._internal.actions.relayer import gasless
from polymarket._internal.actions.relayer.calls import TransactionCall

class Relayer:
    def __init__(self, answer):
        self.answer, self.asked = answer, []
    def get_json(self, path, params=None):
        self.asked.append([path, dict(params or {})])
        return self.answer

class Rpc:
    def eth_estimate_gas(self, tx):
        raise RuntimeError("no node: the SDK falls back to its default gas limit")

result = []
for case in payload["cases"]:
    signer = Account.from_key(case["key"])
    relayer = Relayer(case["answer"])
    ctx = SimpleNamespace(signer=signer, wallet=case["wallet"], environment_config=config,
                          relayer=relayer, rpc=Rpc())
    calls = [TransactionCall(to=c["target"], data=c["data"], value=int(c["value"]))
             for c in case["calls"]]
    build = (gasless.build_signed_proxy_payload_sync if case["kind"] == 1
             else gasless.build_signed_safe_payload_sync)
    body = build(ctx, calls=calls, metadata=case["metadata"])
    result.append({"asked": relayer.asked, "body": json.dumps(body)})
"""

AUTH = RelayerApiKey(key="k", address=OWNERS[0])
RELAY = "0x7a2ba8f0c2f4b8b9e2c17d1d6a8a4d0b1b0b4c1e"


def _cases(table: str) -> list[dict[str, Any]]:
    contracts = TABLES[table]
    approvals = [a.call() for a in required_approvals(contracts)]
    call_sets = [approvals[:1], approvals,
                 [Call(target=OWNERS[5], data="0x", value=7),
                  Call(target=contracts.collateral_token, data="0xdeadbeef" + "00" * 61)],
                 [Call(target=OWNERS[4], data="0x1234", value=10**18)]]
    out = []
    for i, calls in enumerate(call_sets):
        for kind in (1, 2):
            nonce = str([0, 5, 31, 2**64 + 7][i])
            answer = {"address": RELAY if kind == 1 else OWNERS[i], "nonce": nonce}
            out.append({"key": KEYS[i].private_key, "index": i, "kind": kind,
                        "wallet": OWNERS[(i + 1) % len(OWNERS)], "answer": answer,
                        "metadata": ["", "copytrade approvals", "x" * 500, "ü"][i],
                        "calls": [c.as_json() for c in calls]})
    return out


def _ours(case: dict[str, Any], table: str) -> dict[str, Any]:
    """Drive ``legacy_batch`` by hand: the endpoints it asks, then the body it submits."""
    calls = [Call(target=c["target"], data=c["data"], value=int(c["value"]))
             for c in case["calls"]]
    steps = legacy_batch(AUTH, KEYS[case["index"]], signature_type=case["kind"],
                         contracts=TABLES[table], wallet=case["wallet"], calls=calls,
                         metadata=case["metadata"])
    ask = next(steps)
    nonce = int(case["answer"]["nonce"])
    submit = steps.send((RELAY, nonce) if case["kind"] == 1 else nonce)
    assert submit.request.path == "/submit" and submit.request.headers["RELAYER_API_KEY"] == "k"
    with pytest.raises(StopIteration) as done:
        steps.send(RelayerTransaction(transaction_id="t", state="STATE_NEW"))
    assert done.value.value.transaction_id == "t"
    return {"asked": [[ask.request.path, dict(ask.request.params)]],
            "body": json.dumps(json.loads(submit.request.body))}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_proxy_and_safe_payloads_match_the_sdk_byte_for_byte(table: str) -> None:
    cases = _cases(table)
    theirs = sdk_result(SDK_LEGACY, {"cases": cases,
                                     "contracts": contracts_json(TABLES[table])})
    for case, their in zip(cases, theirs, strict=True):
        mine = _ours(case, table)
        assert mine == their, case["kind"]
        body = json.loads(mine["body"])
        key = KEYS[case["index"]]
        # the SDK signs with the owner; the bodies name it and the wallet
        assert (body["from"], body["proxyWallet"]) == (key.address, case["wallet"])
        assert body["signature"][-2:] in (("1b", "1c") if case["kind"] == 1 else ("1f", "20"))


def test_a_safe_runs_one_call_directly_and_several_through_multisend() -> None:
    contracts = TABLES["dev"]
    one = [Call(target=OWNERS[1], data="0xabcd", value=3)]
    assert safe_transaction(one, contracts.safe_multisend) == (OWNERS[1], "0xabcd", 3, 0)
    to, data, value, operation = safe_transaction(one * 2, contracts.safe_multisend)
    assert (to, value, operation) == (contracts.safe_multisend, 0, SAFE_DELEGATECALL)
    assert data.startswith("0x8d80ff0a")  # multiSend(bytes)
    # the nonce is part of what is signed: a replay under another nonce is another hash
    fields = dict(chain_id=1, safe=OWNERS[2], to=to, data=data, value=0, operation=1)
    assert safe_tx_hash(nonce=1, **fields) != safe_tx_hash(nonce=2, **fields)


def test_empty_or_wrong_kind_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(ValueError, match="at least one call"):
        proxy_calldata([])
    with pytest.raises(ValueError, match="proxy \\(1\\) or Safe \\(2\\)"):
        next(legacy_batch(AUTH, KEYS[0], signature_type=3, contracts=TABLES["dev"],
                          wallet=OWNERS[1], calls=[Call(target=OWNERS[2], data="0x")]))
