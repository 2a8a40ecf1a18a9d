"""The `chain` fixture: one anvil node per test session with our contracts deployed.

Tests that need a wallet make a fresh one with `chain.new_wallet()`, so they never share
nonces or balances with other tests on the session's chain.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from web3 import Web3

from chain.devchain import (
    AnvilProcess,
    DevAccount,
    DevContracts,
    deploy_dev_contracts,
    find_anvil,
    start_anvil,
)
from chain.keys import Keypair, generate_keypair

ONE_MATIC = 10**18


@dataclass
class DevChain:
    """A running dev chain: node, deployed contracts, funded accounts."""

    anvil: AnvilProcess
    contracts: DevContracts

    @property
    def rpc_url(self) -> str:
        """The node's JSON-RPC URL."""
        return self.anvil.rpc_url

    @property
    def chain_id(self) -> int:
        """The node's chain id."""
        return self.anvil.chain_id

    @property
    def accounts(self) -> list[DevAccount]:
        """anvil's funded accounts; account 0 deployed the contracts."""
        return self.anvil.accounts

    def web3(self) -> Web3:
        """A Web3 for the node."""
        return self.contracts.web3()

    def new_wallet(self, native_wei: int = ONE_MATIC) -> Keypair:
        """A fresh EOA holding native_wei of MATIC."""
        wallet = generate_keypair()
        if native_wei:
            self.contracts.fund_native(wallet.address, native_wei)
        return wallet


@pytest.fixture(scope="session")
def chain() -> Iterator[DevChain]:
    """Start anvil on a free port, deploy the dev contracts, stop anvil at the end."""
    if find_anvil() is None:
        pytest.fail("anvil is not installed: run `make setup` (npm install @foundry-rs/anvil)")
    anvil = start_anvil()
    try:
        contracts = deploy_dev_contracts(anvil.rpc_url, anvil.accounts[0].private_key)
        yield DevChain(anvil=anvil, contracts=contracts)
    finally:
        anvil.stop()
