"""The official SDK (``polymarket-client``) drives the sandbox relayer: pointed at the
sandbox's CLOB and relayer URLs, it derives CLOB credentials, deploys the deposit wallet
(WALLET-CREATE, polled to CONFIRMED) and sends the full approvals batch as a WALLET
transaction, signed and enveloped its own way; with the venue's account rules on (the
sandbox's default) it goes on to refresh the balance cache and fill a FAK order as the
deposit wallet (issue 16)."""

from __future__ import annotations

from eth_account import Account

from devstack.venue.order_signing import ORDER_TYPE_STRING
from tests.devstack.venue.conftest import Control
from tests.sdk_env import sdk_result
from venue.accounts.approvals import MAX_UINT256
from venue.accounts.derivation import beacon_deposit_wallet_address

# A SecureClient on the sandbox's URLs (``client``, ``config``) for payload["key"], with the
# builder credentials; the deposit wallet is deployed (WALLET-CREATE) when it is created.
SDK_CLIENT = """
import dataclasses
from polymarket import BuilderApiKey, SecureClient
from polymarket._internal.environment import PRODUCTION_CONFIG, create_environment

config = dataclasses.replace(PRODUCTION_CONFIG, clob_url=payload["clob_url"],
                             relayer_url=payload["relayer_url"], relayer_poll_frequency_ms=50)
environment = create_environment(name="sandbox", config=config)
client = SecureClient.create(private_key=payload["key"], environment=environment,
                             api_key=BuilderApiKey(*payload["builder"]))
"""

# Every required approval, as one WALLET batch (the SDK's own list and calldata).
SDK_APPROVE = """
from polymarket._internal.actions.relayer.approvals import (
    _required_trading_approvals, build_missing_trading_approval_calls)
from polymarket.models.trading import MissingTradingApprovals

erc20, erc1155 = _required_trading_approvals(config)
calls = build_missing_trading_approval_calls(MissingTradingApprovals(erc20=erc20,
                                                                     erc1155=erc1155))
outcome = client.execute_transaction(calls=calls, metadata="approvals").wait()
"""

SDK_DEPLOY_AND_APPROVE = SDK_CLIENT + SDK_APPROVE + """
result = {"wallet": str(client._ctx.wallet), "calls": len(calls),
          "hash": str(outcome.transaction_hash)}
client.close()
"""

# A FAK BUY signed once, posted before and after /balance-allowance/update (signature type 3);
# post_order has no allowance recovery, so the first answer is the venue's own.
SDK_TRADE = SDK_CLIENT + SDK_APPROVE + """
from polymarket._internal.actions import account as account_actions
from polymarket.errors import RequestRejectedError

signed = client.create_market_order(token_id=payload["token"], side="BUY", amount="5",
                                    order_type="FAK")
try:
    before = ["accepted", client.post_order(signed).status]
except RequestRejectedError as error:
    before = [error.status, str(error)]
path, params = account_actions.build_update_balance_allowance_request(
    asset_type="COLLATERAL", signature_type=3)
client._ctx.secure_clob.get_bytes(path, params=params)
answer = client.post_order(signed)
result = {"wallet": str(client.wallet), "signer": str(client.signer),
          "wallet_type": client.wallet_type, "before": before,
          "answer": answer.model_dump(mode="json"),
          "order": {"maker": str(signed.maker), "signer": str(signed.signer),
                    "signature_type": signed.signature_type,
                    "signature": str(signed.signature)}}
client.close()
"""


# The owner grants a session key (CLOB scope) through the relayer, the session key trades as
# the wallet with its own credentials, the owner revokes it; then the key is refused.
SDK_SESSION_KEY = SDK_CLIENT.replace("client = ", "owner = ") + """
from polymarket.errors import RequestRejectedError

owner.authorize_session_key(address=payload["session_address"], scopes=["CLOB"])
listed = [str(k.address) for k in owner.fetch_session_keys()]
session = SecureClient.create(private_key=payload["session_key"], wallet=str(owner.wallet),
                              environment=environment)
placed = session.place_limit_order(token_id=payload["token"], side="BUY", price="0.2",
                                   size="10")
owner.revoke_session_key(address=payload["session_address"])
after = [str(k.address) for k in owner.fetch_session_keys()]
try:
    session.place_limit_order(token_id=payload["token"], side="BUY", price="0.21", size="10")
    refused = "accepted"
except RequestRejectedError as error:
    refused = [error.status, str(error)]
result = {"wallet": str(owner.wallet), "listed": listed, "after": after,
          "signer_type": session._ctx.signer_type,
          "placed": placed.model_dump(mode="json"), "refused": refused}
owner.close()
session.close()
"""


def _sdk_payload(venue, owner, **more) -> dict:
    return {"key": owner.key.hex(), "builder": list(venue.state.config.dev_builder),
            "clob_url": venue.clob_url, "relayer_url": venue.relayer_url, **more}


def test_the_official_sdk_deploys_a_deposit_wallet_and_approves(sandbox_venue, control):
    control.call("POST", "/relayer", {"step_seconds": "0.05"}, expect=200)
    owner = Account.create()
    result = sdk_result(SDK_DEPLOY_AND_APPROVE, _sdk_payload(sandbox_venue, owner))
    wallet = beacon_deposit_wallet_address(owner.address)
    assert result["wallet"] == wallet
    assert result["hash"].startswith("0x")
    account = control.call("GET", f"/accounts/{wallet}", expect=200)
    assert account["wallet"]["registered"] and account["wallet"]["nonce"] == 1
    assert account["wallet"]["owners"] == [owner.address.lower()]
    # every approval the SDK asked for is in place, no more and no fewer
    granted = len(account["allowances"]) + len(account["operators"])
    assert granted == result["calls"] and result["calls"] >= 10
    assert all(a["amount"] == str(MAX_UINT256) for a in account["allowances"])


def test_the_official_sdk_onboards_and_fills_a_fak_order_as_a_deposit_wallet(
        sandbox_venue, control: Control):
    """Deploy → approvals → L1 credentials (owner) → balance update → FAK as type 3, with
    the venue's account rules on and the deposit not yet in the CLOB's cache."""
    control.call("POST", "/relayer", {"step_seconds": "0.05"}, expect=200)
    assert control.state()["strict_accounts"] is True  # the default: the venue's rules
    owner = Account.create()
    wallet = beacon_deposit_wallet_address(owner.address)
    control.fund(wallet, "100", seen=False)  # arrived on chain; the cache has not seen it
    token = control.market(index=0)["token_ids"][0]
    result = sdk_result(SDK_TRADE, _sdk_payload(sandbox_venue, owner, token=token))

    assert (result["wallet"], result["signer"]) == (wallet, owner.address)
    assert result["wallet_type"] == "DEPOSIT_WALLET"
    assert result["before"] == [400, "not enough balance / allowance"]
    order = result["order"]
    assert order["maker"] == order["signer"] == wallet and order["signature_type"] == 3
    # ERC-7739: 65-byte signature, app domain, contents hash, the Order type string, its length
    assert len(order["signature"]) == 2 + 2 * (65 + 32 + 32 + len(ORDER_TYPE_STRING) + 2)
    answer = result["answer"]
    assert answer["status"] == "matched" and answer["making_amount"] == "5"
    spent = control.balances(wallet)
    assert spent["pusd"] == "95" and spent["positions"][token] == answer["taking_amount"]
    envelope = control.received_orders()[-1]
    assert envelope["status"] == 200 and envelope["body"]["orderType"] == "FAK"


def test_the_official_sdk_grants_trades_with_and_revokes_a_session_key(sandbox_venue, control):
    """§2.6 through the SDK: authorization (builder auth, Idempotency-Key), the CLOB's
    session-signer list, a session-key order in the envelope, revocation cancelling it."""
    control.call("POST", "/relayer", {"step_seconds": "0.05"}, expect=200)
    assert control.state()["strict_accounts"] is True  # the default: the venue's rules
    owner, session = Account.create(), Account.create()
    wallet = beacon_deposit_wallet_address(owner.address)
    control.fund(wallet, "100")
    token = control.add_market("sdk-session-key")["token_ids"][0]
    setup = SDK_CLIENT + SDK_APPROVE + "client.close()\nresult = None\n"
    sdk_result(setup, _sdk_payload(sandbox_venue, owner))  # deployed and approved
    result = sdk_result(SDK_SESSION_KEY, _sdk_payload(
        sandbox_venue, owner, token=token, session_key=session.key.hex(),
        session_address=session.address))

    assert result["wallet"] == wallet and result["signer_type"] == "SESSION_KEY"
    assert result["listed"] == [session.address] and result["after"] == []
    assert result["placed"]["status"] == "live"
    order = sandbox_venue.state.desk.orders[result["placed"]["order_id"]]
    assert order.maker.lower() == wallet.lower() and order.status == "CANCELED"
    assert result["refused"] == [400, "invalid signature"]
    assert control.call("GET", f"/accounts/{wallet}", expect=200)["wallet"][
        "session_signers"] == {}
