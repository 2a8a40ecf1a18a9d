"""Balance-allowance reads name the asset type of what they ask about (ACCOUNTS.md §5, §11):
``COLLATERAL`` for pUSD, ``CONDITIONAL`` for a CTF token, ``CONDITIONAL-V2`` for a
protocol-v2 position; the query equals the official SDK's, parameter for parameter."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sdk_env import sdk_result
from venue.clob import ClobApi
from venue.models import ApiCreds
from venue.order_versions import balance_asset_type

CTF_TOKEN = "71321045679252212594626385532706912750332728571942532289631379312455583992563"
POSITIONS = ["895257453734540292493143124621755605615887197499956109032745153687078305792",
             str((1 << 248) | (0xC0FFEE << 104) | 1)]
CREDS = ApiCreds(api_key="00000000-0000-0000-0000-000000000000",
                 secret="c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2U=",
                 passphrase="pass", address="0x" + "11" * 20)

SDK_REQUESTS = """
from polymarket._internal.actions import account
from polymarket._internal.actions.orders.allowance import resolve_order_balance_allowance_target
result = []
for token, side, signature_type in payload:
    asset_type, asset_id = resolve_order_balance_allowance_target(side=side, asset_id=token)
    for build in (account.build_balance_allowance_request,
                  account.build_update_balance_allowance_request):
        path, params = build(asset_type=asset_type, asset_id=asset_id,
                             signature_type=signature_type)
        result.append([path, [[k, str(v)] for k, v in params.items()]])
"""


class _Recorder:
    """A runner that keeps the request and answers nothing (the shape is what is tested)."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    def __call__(self, call: Any) -> None:
        self.requests.append(call.request)


def test_the_asset_type_follows_the_id() -> None:
    assert balance_asset_type(None) == balance_asset_type("") == "COLLATERAL"
    assert balance_asset_type(CTF_TOKEN) == "CONDITIONAL"
    assert {balance_asset_type(p) for p in POSITIONS} == {"CONDITIONAL-V2"}


@pytest.mark.parametrize("signature_type", [0, 3])
def test_reads_and_refreshes_match_the_sdk(signature_type: int) -> None:
    # the SDK asks about the token on a SELL, about pUSD on a BUY
    cases = [[token, side, signature_type] for token in (CTF_TOKEN, *POSITIONS)
             for side in ("SELL", "BUY")]
    theirs = sdk_result(SDK_REQUESTS, cases)
    recorder = _Recorder()
    clob = ClobApi(recorder, 137)
    for token, side, _ in cases:
        asked = token if side == "SELL" else None
        clob.balance_allowance(CREDS, token_id=asked, signature_type=signature_type)
        clob.update_balance_allowance(CREDS, token_id=asked, signature_type=signature_type)
    ours = [[r.path, [list(p) for p in r.params]] for r in recorder.requests]
    assert ours == theirs
    assert any(["asset_type", "CONDITIONAL-V2"] in params for _, params in ours)
