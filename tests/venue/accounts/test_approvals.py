"""The required approvals: ours are the SDK's list, calldata and checks, byte for byte."""

from __future__ import annotations

import pytest

from tests.sdk_env import SDK_CONFIG, sdk_result
from tests.venue.accounts.conftest import OWNERS, TABLES, contracts_json
from venue.accounts import MAX_UINT256, POLYGON, Approval, required_approvals

SDK_APPROVALS = SDK_CONFIG + """
from polymarket._internal.actions.relayer import approvals as a
from polymarket._internal.actions.relayer.calls import (
    erc20_allowance_call, erc1155_is_approved_for_all_call)
from polymarket.models.trading import MissingTradingApprovals
erc20, erc1155 = a._required_trading_approvals(config)
calls = a.build_missing_trading_approval_calls(
    MissingTradingApprovals(erc20=erc20, erc1155=erc1155))
owner = payload["owner"]
reads = [erc20_allowance_call(token_address=x.token_address, owner=owner, spender=x.spender)
         for x in erc20]
reads += [erc1155_is_approved_for_all_call(token_address=x.token_address, owner=owner,
                                           operator=x.operator) for x in erc1155]
result = {
    "calls": [[str(c.to), c.data, c.value] for c in calls],
    "reads": [[str(c.to), c.data] for c in reads],
}
"""


@pytest.mark.parametrize("table", sorted(TABLES))
def test_approvals_match_the_sdk(table: str) -> None:
    contracts = TABLES[table]
    owner = OWNERS[3]
    theirs = sdk_result(SDK_APPROVALS, {"owner": owner, "contracts": contracts_json(contracts)})
    approvals = required_approvals(contracts)
    assert [[a.call().target, a.call().data, a.call().value] for a in approvals] == \
        theirs["calls"]
    assert [[a.token, a.read_calldata(owner)] for a in approvals] == theirs["reads"]


def test_the_polygon_set_is_the_documented_one() -> None:
    """ACCOUNTS.md §5: pUSD to seven spenders, CTF to seven operators, PositionManager to three."""
    approvals = required_approvals()
    by_token: dict[tuple[str, str], list[str]] = {}
    for approval in approvals:
        by_token.setdefault((approval.token, approval.method), []).append(approval.spender)
    assert {k: len(v) for k, v in by_token.items()} == {
        (POLYGON.collateral_token, "approve"): 7,
        (POLYGON.conditional_tokens, "setApprovalForAll"): 7,
        (POLYGON.position_manager, "setApprovalForAll"): 3,
    }
    assert "0xE111180000d2663C0091e4f400237545B87B996B" in by_token[
        (POLYGON.collateral_token, "approve")]
    # The deprecated V1 NegRiskAdapter is no longer approved (SDK 0.1.0-b21).
    assert all(a.spender != "0xd91E80cF2E7be2e162c6513ceD06f1dD0dA35296" for a in approvals)


def test_granted_reads_the_views_answer() -> None:
    erc20 = Approval(POLYGON.collateral_token, "approve", POLYGON.standard_exchange)
    erc1155 = Approval(POLYGON.conditional_tokens, "setApprovalForAll", POLYGON.exchange_v3)
    assert erc20.granted(MAX_UINT256) and not erc20.granted(MAX_UINT256 - 1)
    assert not erc20.granted(0)
    assert erc1155.granted(1) and not erc1155.granted(0)
