"""The deposit wallet's signed Batch and the relayer's submit bodies, against the SDK."""

from __future__ import annotations

import json

import pytest

from tests.sdk_env import SDK_CONFIG, sdk_result
from tests.venue.accounts.conftest import DEV, KEYS, OWNERS, TABLES, contracts_json
from venue.accounts import (
    Call,
    batch_digest,
    beacon_deposit_wallet_address,
    required_approvals,
    sign_batch,
    wallet_batch_payload,
    wallet_create_payload,
)
from venue.signing.eip712 import session_signer_envelope

SDK_BATCH = SDK_CONFIG + """
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_utils.crypto import keccak
from polymarket._internal.actions.relayer.calls import TransactionCall
from polymarket._internal.actions.relayer.gasless import build_deposit_wallet_payload
from polymarket._internal.actions.relayer.signing.deposit_wallet import (
    build_deposit_wallet_typed_data, sign_deposit_wallet_batch)
from polymarket._internal.wallet import wrap_deposit_wallet_signature
result = []
for case in payload["cases"]:
    signer = Account.from_key(case["key"])
    calls = [TransactionCall(to=c["target"], data=c["data"], value=int(c["value"]))
             for c in case["calls"]]
    args = dict(wallet=case["wallet"], calls=calls, nonce=case["nonce"],
                deadline=case["deadline"], chain_id=config.chain_id)
    signable = encode_typed_data(full_message=build_deposit_wallet_typed_data(**args))
    digest = keccak(b"\\x19" + signable.version + signable.header + signable.body)
    signature = wrap_deposit_wallet_signature(
        signer=signer.address, signer_type="SESSION_KEY" if case["session"] else "OWNER",
        signature=sign_deposit_wallet_batch(signer, **args))
    body = build_deposit_wallet_payload(
        signer_address=signer.address,
        deposit_wallet_factory=config.wallet_derivation.deposit_wallet_factory,
        wallet=case["wallet"], calls=calls, nonce=case["nonce"], deadline=case["deadline"],
        signature=signature, metadata=case["metadata"])
    result.append({"digest": digest.hex(), "signature": signature,
                   "body": json.dumps(body)})
"""


def cases(table: str) -> list[dict]:
    contracts = TABLES[table]
    approvals = [a.call() for a in required_approvals(contracts)]
    wallet_of = [beacon_deposit_wallet_address(owner, contracts) for owner in OWNERS]
    call_sets = [
        [],
        approvals[:1],
        approvals,
        [Call(target=OWNERS[5], data="0x", value=0),
         Call(target=contracts.collateral_token, data="0xdeadbeef" + "00" * 61, value=10**18)],
    ]
    out = []
    for i, calls in enumerate(call_sets):
        for session in (False, True):
            key = KEYS[i]
            # A session key signs for another owner's wallet; the owner for its own.
            wallet = wallet_of[(i + 1) % len(OWNERS)] if session else wallet_of[i]
            out.append({"key": key.private_key, "session": session, "wallet": wallet,
                        "nonce": str([0, 1, 31, 2**64 + 7][i]),
                        "deadline": str(1_790_000_000 + 600 * i),
                        "metadata": ["", "approvals", "x" * 500, "wrap ü"][i],
                        "calls": [c.as_json() for c in calls], "index": i})
    return out


@pytest.mark.parametrize("table", sorted(TABLES))
def test_batch_digest_signature_and_body_match_the_sdk(table: str) -> None:
    contracts = TABLES[table]
    all_cases = cases(table)
    theirs = sdk_result(SDK_BATCH, {"cases": all_cases, "contracts": contracts_json(contracts)})
    for case, their in zip(all_cases, theirs, strict=True):
        key = KEYS[case["index"]]
        calls = [Call(target=c["target"], data=c["data"], value=int(c["value"]))
                 for c in case["calls"]]
        fields = dict(chain_id=contracts.chain_id, wallet=case["wallet"],
                      nonce=int(case["nonce"]), deadline=int(case["deadline"]), calls=calls)
        assert batch_digest(**fields).hex() == their["digest"]
        signature = sign_batch(key, session_signer=case["session"], **fields)
        assert signature == their["signature"]
        # 65 bytes, or the envelope: 4 head words, the signature in 3 words, the magic.
        assert len(signature) == (2 + 130 if not case["session"] else 2 + 2 * 32 * 8)
        body = wallet_batch_payload(signer=key.address,
                                    factory=contracts.deposit_wallet_factory,
                                    signature=signature, metadata=case["metadata"], **{
                                        k: v for k, v in fields.items() if k != "chain_id"})
        assert json.dumps(body) == their["body"]


SDK_CREATE = SDK_CONFIG + """
from types import SimpleNamespace
from polymarket._internal.actions.relayer import gasless

class Captured(Exception):
    pass

class Relayer:
    def post_json(self, path, json):
        raise Captured(path, json)

result = []
for owner, metadata in payload["cases"]:
    ctx = SimpleNamespace(api_key=object(), signer=SimpleNamespace(address=owner),
                          environment_config=config, relayer=Relayer())
    try:
        gasless.submit_deposit_wallet_create_sync(ctx, metadata=metadata)
    except Captured as sent:
        result.append([sent.args[0], json.dumps(sent.args[1])])
"""


def test_wallet_create_body_matches_what_the_sdk_posts() -> None:
    owners = [(OWNERS[0], ""), (OWNERS[1], "copytrade"), (OWNERS[2].lower(), "ü" * 500)]
    theirs = sdk_result(SDK_CREATE, {"cases": owners, "contracts": contracts_json(DEV)})
    mine = [["/submit", json.dumps(wallet_create_payload(owner, DEV.deposit_wallet_factory,
                                                         metadata))]
            for owner, metadata in owners]
    assert mine == theirs


def test_metadata_over_the_relayers_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="at most 500"):
        wallet_create_payload(OWNERS[0], DEV.deposit_wallet_factory, "x" * 501)
    with pytest.raises(ValueError, match="at most 500"):
        wallet_batch_payload(signer=OWNERS[0], factory=DEV.deposit_wallet_factory,
                             wallet=OWNERS[1], nonce=0, deadline=0, calls=[],
                             signature="0x", metadata="x" * 501)


def test_session_envelope_layout() -> None:
    """abi.encode(bytes32(signer), 0, bytes sig) then the 32-byte 0x6492… magic."""
    signature = bytes(range(65))
    wrapped = session_signer_envelope(OWNERS[0], signature)
    words = [wrapped[i:i + 32] for i in range(0, len(wrapped), 32)]
    assert words[0] == bytes.fromhex(OWNERS[0][2:]).rjust(32, b"\0")
    assert words[1] == bytes(32) and int.from_bytes(words[2], "big") == 96
    assert int.from_bytes(words[3], "big") == 65
    assert b"".join(words[4:7])[:65] == signature and b"".join(words[4:7])[65:] == bytes(31)
    assert words[7] == bytes.fromhex("6492" * 16) and len(words) == 8
