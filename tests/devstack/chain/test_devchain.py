"""The dev chain: anvil lifecycle and the deployed contracts' environment."""

from __future__ import annotations

import pytest

from chain.errors import ChainUnavailable
from chain.rpc import connect
from chain.tokens import native_balance_wei, token_decimals
from devstack.chain.devchain import DevContracts, find_anvil, start_anvil

ENV_NAMES = {
    "POLYGON_RPC_URL", "CHAIN_ID", "PUSD_ADDRESS", "USDCE_ADDRESS", "CTF_ADDRESS",
    "CTF_EXCHANGE_ADDRESS", "NEG_RISK_EXCHANGE_ADDRESS", "NEG_RISK_ADAPTER_ADDRESS",
    "DEPOSIT_WALLET_FACTORY_ADDRESS", "DEPOSIT_WALLET_BEACON_ADDRESS", "COLLATERAL_ONRAMP_ADDRESS",
    "CTF_COLLATERAL_ADAPTER_ADDRESS", "NEG_RISK_COLLATERAL_ADAPTER_ADDRESS",
    "NATIVE_USDC_ADDRESS", "POSITION_MANAGER_ADDRESS", "PROTOCOL_V2_ROUTER_ADDRESS",
    "COPY_PENDING_OPERATORS",
}  # fmt: skip
# the exchanges are keyless stand-ins; every other address holds our contracts
DEPLOYED = {name for name in ENV_NAMES if name.endswith("_ADDRESS")} - {
    "CTF_EXCHANGE_ADDRESS", "NEG_RISK_EXCHANGE_ADDRESS",
}


def test_env_names_the_architecture_variables(chain) -> None:
    env = chain.contracts.env()
    assert set(env) == ENV_NAMES
    assert env["POLYGON_RPC_URL"] == chain.rpc_url
    assert env["CHAIN_ID"] == str(chain.chain_id)
    assert env["COPY_PENDING_OPERATORS"] == chain.contracts.deployer  # the sandbox's operator
    w3 = chain.web3()
    for name in sorted(DEPLOYED):
        assert w3.eth.get_code(env[name]), name
    assert token_decimals(w3, env["PUSD_ADDRESS"]) == 6
    assert token_decimals(w3, env["NATIVE_USDC_ADDRESS"]) == 6
    assert len({v for k, v in env.items() if k.endswith("_ADDRESS")}) == 14


def test_contracts_description_round_trips(chain) -> None:
    again = DevContracts.from_dict(chain.contracts.to_dict())
    assert again.env() == chain.contracts.env()
    assert again.deployer == chain.accounts[0].address


def test_start_and_stop_a_node_with_its_own_chain_id() -> None:
    assert find_anvil() is not None
    node = start_anvil(chain_id=137)
    try:
        w3 = node.web3()
        assert w3.eth.chain_id == 137
        assert len(node.accounts) == 10
        # anvil's well-known first test account
        assert node.accounts[0].address == "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
        assert native_balance_wei(w3, node.accounts[0].address) > 0
    finally:
        node.stop()
    assert not node.running
    with pytest.raises(ChainUnavailable):
        connect(node.rpc_url, timeout=1, check=True)
