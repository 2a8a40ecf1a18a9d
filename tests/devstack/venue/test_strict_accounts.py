"""The venue's account rules at order time (``strict_accounts``: on by default, one switch
in the control API): deposit-wallet makers only unless allowlisted or grandfathered, and
orders need the CLOB's cached balance AND the exchange's allowance."""

from __future__ import annotations

import pytest
from py_clob_client_v2.exceptions import PolyApiException

from devstack.venue.config import SandboxConfig
from tests.devstack.venue.test_orders import _limit, _rejection
from tests.devstack.venue.test_relayer import EXCHANGE, Relayer, _owner_clob
from venue.accounts.approvals import required_approvals

EOA_REFUSED = "maker address not allowed, please use the deposit wallet flow"


def test_the_account_rules_are_on_by_default_and_one_switch_turns_them_off(control,
                                                                          make_trader):
    assert SandboxConfig().strict_accounts is True
    # the older, overlapping switch is gone: the allowlists cover its "legacy" makers
    assert control.http.post("/_sandbox/eoa-refusal", json={"enabled": True}
                             ).status_code == 404
    assert "refuse_eoa_makers" not in control.state()
    market = control.add_market("strict-off")
    trader = make_trader("100", allowlisted=False)
    assert control.call("POST", "/strict-accounts", {}, expect=200)["enabled"] is True
    with pytest.raises(PolyApiException) as refused:
        trader.client.create_and_post_order(_limit(market["token_ids"][0], "0.5", "10"))
    assert _rejection(refused) == (400, EOA_REFUSED)
    assert control.call("POST", "/strict-accounts", {"enabled": False},
                        expect=200)["enabled"] is False
    answer = trader.client.create_and_post_order(_limit(market["token_ids"][0], "0.5", "10"))
    assert answer["status"] == "live"
    control.call("POST", "/reset", expect=200)  # a reset restores the configured value
    assert control.state()["strict_accounts"] is True


def test_an_eoa_maker_needs_the_allowlist_then_a_cached_allowance(control, make_trader):
    market = control.add_market("strict-eoa")
    token = market["token_ids"][0]
    trader = make_trader("100", allowlisted=False)
    with pytest.raises(PolyApiException) as refused:
        trader.client.create_and_post_order(_limit(token, "0.5", "10"))
    assert _rejection(refused) == (400, EOA_REFUSED)

    control.call("POST", "/strict-accounts", {"allowlisted": [trader.address]}, expect=200)
    with pytest.raises(PolyApiException) as unapproved:
        trader.client.create_and_post_order(_limit(token, "0.5", "10"))
    assert _rejection(unapproved) == (400, "not enough balance / allowance")
    control.call("POST", "/approvals", {"owner": trader.address,
                                        "token": control.state()["collateral"],
                                        "spender": EXCHANGE}, expect=200)
    with pytest.raises(PolyApiException) as stale:  # the cache still says no allowance
        trader.client.create_and_post_order(_limit(token, "0.5", "10"))
    assert _rejection(stale) == (400, "not enough balance / allowance")
    trader.client.update_balance_allowance()
    answer = trader.client.create_and_post_order(_limit(token, "0.5", "10"))
    assert answer["status"] == "live"


def test_a_deposit_wallet_trades_once_funded_approved_and_refreshed(sandbox_venue, control):
    relayer = Relayer(sandbox_venue, control)
    relayer.switch(step_seconds="0")
    relayer.create()
    relayer.run([approval.call() for approval in required_approvals()])
    owner = _owner_clob(relayer, sandbox_venue)
    market = control.add_market("strict-wallet")
    control.fund(relayer.wallet, "100", seen=False)
    with pytest.raises(PolyApiException) as unseen:
        owner.create_and_post_order(_limit(market["token_ids"][0], "0.5", "10"))
    assert _rejection(unseen) == (400, "not enough balance / allowance")
    owner.update_balance_allowance()
    answer = owner.create_and_post_order(_limit(market["token_ids"][0], "0.5", "10"))
    assert answer["status"] == "live"


@pytest.mark.parametrize(("body", "error"), [
    ({"enabled": "yes"}, "enabled must be true or false"),
    ({"enabled": 0}, "enabled must be true or false"),
    ({"allowlisted": "0x" + "12" * 20}, "allowlisted must be a list of addresses"),
    ({"allowlisted": ["0x1234"]}, "allowlisted must be a list of addresses"),
    ({"grandfathered": [None]}, "grandfathered must be a list of addresses"),
])
def test_the_switch_refuses_bad_input_and_changes_nothing(control, body, error):
    # a valid part beside the bad one is not applied either
    refused = control.http.post("/_sandbox/strict-accounts",
                                json={"enabled": False, "allowlisted": ["0x" + "56" * 20],
                                      **body})
    assert (refused.status_code, refused.json()) == (400, {"error": error})
    assert control.strict_accounts() == {"enabled": True, "allowlisted": [],
                                         "grandfathered": []}


def test_grandfathered_and_allowlisted_makers_are_kept_apart(control):
    eoa, proxy = "0x" + "ab" * 20, "0x" + "CD" * 20
    control.strict_accounts(allowlisted=[eoa], grandfathered=[proxy])
    again = control.strict_accounts(allowlisted=[eoa.upper().replace("0X", "0x")])
    assert again == {"enabled": True, "allowlisted": [eoa], "grandfathered": [proxy.lower()]}


def test_a_legacy_wallet_is_a_proxy_or_a_safe(control):
    body = {"wallet": "0x" + "12" * 20, "owner": "0x" + "34" * 20}
    refused = control.http.post("/_sandbox/legacy-wallets", json={**body, "signature_type": 3})
    assert refused.status_code == 400 and "1 (proxy) or 2 (Safe)" in refused.text
    control.call("POST", "/legacy-wallets", {**body, "signature_type": 2}, expect=200)
