"""The official SDK (``polymarket-client``) drives the sandbox relayer: pointed at the
sandbox's CLOB and relayer URLs, it derives CLOB credentials, deploys the deposit wallet
(WALLET-CREATE, polled to CONFIRMED) and sends the full approvals batch as a WALLET
transaction, signed and enveloped its own way."""

from __future__ import annotations

from eth_account import Account

from tests.sdk_env import sdk_result
from venue.accounts.approvals import MAX_UINT256
from venue.accounts.derivation import beacon_deposit_wallet_address

SDK_DEPLOY_AND_APPROVE = """
import dataclasses
from polymarket import BuilderApiKey, SecureClient
from polymarket._internal.environment import PRODUCTION_CONFIG, create_environment
from polymarket._internal.actions.relayer.approvals import (
    _required_trading_approvals, build_missing_trading_approval_calls)
from polymarket.models.trading import MissingTradingApprovals

config = dataclasses.replace(PRODUCTION_CONFIG, clob_url=payload["clob_url"],
                             relayer_url=payload["relayer_url"], relayer_poll_frequency_ms=50)
environment = create_environment(name="sandbox", config=config)
client = SecureClient.create(private_key=payload["key"], environment=environment,
                             api_key=BuilderApiKey(*payload["builder"]))
erc20, erc1155 = _required_trading_approvals(config)
calls = build_missing_trading_approval_calls(MissingTradingApprovals(erc20=erc20,
                                                                     erc1155=erc1155))
outcome = client.execute_transaction(calls=calls, metadata="approvals").wait()
result = {"wallet": str(client._ctx.wallet), "calls": len(calls),
          "hash": str(outcome.transaction_hash)}
client.close()
"""


def test_the_official_sdk_deploys_a_deposit_wallet_and_approves(sandbox_venue, control):
    control.call("POST", "/relayer", {"step_seconds": "0.05"}, expect=200)
    owner = Account.create()
    builder = list(sandbox_venue.state.config.dev_builder)
    result = sdk_result(SDK_DEPLOY_AND_APPROVE, {
        "key": owner.key.hex(), "builder": builder, "clob_url": sandbox_venue.clob_url,
        "relayer_url": sandbox_venue.relayer_url})
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
