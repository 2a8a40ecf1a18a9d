"""Wallet calls (transfer, redeem through the adapters, session keys) against the SDK; wrap
and unwrap, which the SDK does not build, against eth_abi."""

from __future__ import annotations

import pytest
from eth_abi import encode
from eth_hash.auto import keccak

from tests.sdk_env import SDK_CONFIG, sdk_result
from tests.venue.accounts.conftest import OWNERS, TABLES, contracts_json
from venue.accounts import MAX_UINT256
from venue.accounts.wallet_calls import (
    authorize_session_signer_call,
    redeem_call,
    revoke_session_signer_call,
    router_redeem_call,
    transfer_call,
    unwrap_call,
    wrap_call,
)

CONDITIONS = ["0x" + keccak(f"condition {i}".encode()).hex() for i in range(3)]
AMOUNTS = [0, 1, 1_234_567, MAX_UINT256]

SDK_CALLS = SDK_CONFIG + """
from polymarket._internal.actions.relayer import calls as c
def row(call):
    return [str(call.to), call.data, call.value]
result = {
    "transfers": [row(c.erc20_transfer_call(token_address=config.collateral_token,
                                            recipient=r, amount=a))
                  for r, a in payload["transfers"]],
    "redeems": [row(c.ctf_redeem_positions_call(
        ctf=config.neg_risk_collateral_adapter if neg else config.collateral_adapter,
        collateral=config.collateral_token, condition_id=cid))
        for cid, neg in payload["redeems"]],
    "authorize": [row(c.authorize_session_signer_call(wallet_address=w, session_signer=s,
                                                      valid_until=u))
                  for w, s, u in payload["authorize"]],
    "revoke": [row(c.revoke_session_signer_call(wallet_address=w, session_signer=s))
               for w, s, _ in payload["authorize"]],
}
"""


def row(call) -> list:
    return [call.target, call.data, call.value]


@pytest.mark.parametrize("table", sorted(TABLES))
def test_wallet_calls_match_the_sdk(table: str) -> None:
    contracts = TABLES[table]
    transfers = [[OWNERS[i], amount] for i, amount in enumerate(AMOUNTS)]
    redeems = [[cid, neg] for cid in CONDITIONS for neg in (False, True)]
    authorize = [[OWNERS[0], OWNERS[1], 1_805_000_000], [OWNERS[2], OWNERS[3], 0],
                 [OWNERS[4], OWNERS[5], MAX_UINT256]]
    theirs = sdk_result(SDK_CALLS, {"transfers": transfers, "redeems": redeems,
                                 "authorize": authorize,
                                 "contracts": contracts_json(contracts)})
    assert [row(transfer_call(contracts.collateral_token, r, a)) for r, a in transfers] == \
        theirs["transfers"]
    assert [row(redeem_call(cid, neg_risk=neg, contracts=contracts))
            for cid, neg in redeems] == theirs["redeems"]
    assert [row(authorize_session_signer_call(w, s, u)) for w, s, u in authorize] == \
        theirs["authorize"]
    assert [row(revoke_session_signer_call(w, s)) for w, s, _ in authorize] == theirs["revoke"]


@pytest.mark.parametrize("table", sorted(TABLES))
@pytest.mark.parametrize("amount", AMOUNTS)
def test_wrap_and_unwrap_encode_as_eth_abi_does(table: str, amount: int) -> None:
    contracts = TABLES[table]
    args = encode(["address", "address", "uint256"], [contracts.usdc_e, OWNERS[2], amount])
    wrap = wrap_call(OWNERS[2], amount, contracts)
    unwrap = unwrap_call(OWNERS[2], amount, contracts)
    assert wrap.target == contracts.collateral_onramp
    assert wrap.data == "0x" + (keccak(b"wrap(address,address,uint256)")[:4] + args).hex()
    assert unwrap.target == contracts.collateral_offramp
    assert unwrap.data == "0x" + (keccak(b"unwrap(address,address,uint256)")[:4] + args).hex()


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        redeem_call("0x1234", neg_risk=False)
    with pytest.raises(ValueError, match="not hex"):
        redeem_call("0x" + "zz" * 32, neg_risk=False)
    with pytest.raises(ValueError, match="uint256"):
        transfer_call(OWNERS[0], OWNERS[1], -1)
    with pytest.raises(ValueError, match="uint256"):
        wrap_call(OWNERS[1], MAX_UINT256 + 1)


# Protocol-v2 positions (ACCOUNTS.md §11): the module in the top byte, bits 40..103 zero, the
# outcome in the low byte; and the sample market's (gamma-market-by-slug.json positionIds).
POSITIONS = [str((1 << 248) | (0xC0FFEE << 104) | outcome) for outcome in (0, 1)] + [
    str((2 << 248) | (int(keccak(b"v2").hex()[:36], 16) << 104) | 1),
    "895257453734540292493143124621755605615887197499956109032745153687078305792",
    "895257453734540292493143124621755605615887197499956109032745153687078305793"]

SDK_ROUTER = SDK_CONFIG + """
from polymarket._internal.actions.relayer import calls as c
from polymarket._internal.protocol import decode_v2_outcome_position_id
result = []
for position, amount in payload["redeems"]:
    decoded = decode_v2_outcome_position_id(position)
    call = c.redeem_v2_call(router=config.protocol_v2_router, condition_id=decoded.condition_id,
                            outcome_index=decoded.outcome_index, amount=amount)
    result.append([str(call.to), call.data, call.value])
"""


@pytest.mark.parametrize("table", sorted(TABLES))
def test_a_v2_redeem_through_the_router_matches_the_sdk(table: str) -> None:
    contracts = TABLES[table]
    redeems = [[p, a] for p in POSITIONS for a in AMOUNTS]
    theirs = sdk_result(SDK_ROUTER, {"redeems": redeems, "contracts": contracts_json(contracts)})
    assert [row(router_redeem_call(p, a, contracts)) for p, a in redeems] == theirs
    assert {r[0] for r in theirs} == {contracts.protocol_v2_router}


def test_a_router_redeem_refuses_what_is_no_v2_outcome() -> None:
    with pytest.raises(ValueError, match="outcome byte"):
        router_redeem_call(str((1 << 248) | 7), 1)
    with pytest.raises(ValueError, match="uint256"):
        router_redeem_call(POSITIONS[0], -1)
