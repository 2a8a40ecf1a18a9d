"""The chain as the services see it: the runtime's Web3, contract addresses and chain id.

The part itself (``ChainAccess``, its settings and sealing keys) is in
``services.platform.chain_settings``, built from Settings by ``wiring.build_runtime`` (the
app factory, the worker, a CLI command or a test), so no Flask is needed. Services ask
``web3()`` and ``contracts()`` here, which read the installed runtime; nothing else reads
POLYGON_RPC_URL or the addresses.
"""

from __future__ import annotations

from web3 import Web3

from services.platform.chain_settings import ChainSettings, Contracts
from services.platform.runtime import runtime


def current() -> ChainSettings:
    """The runtime's chain settings."""
    return runtime().chain.settings


def web3() -> Web3:
    """The runtime's shared Web3; FeatureNotEnabled when no RPC is configured."""
    return runtime().chain.web3()


def contracts() -> Contracts:
    """The contract addresses."""
    return current().contracts


def chain_id() -> int:
    """The chain id transactions are signed for."""
    return current().chain_id


# Public block explorers by chain id (a dev chain has none: its hashes are shown unlinked).
EXPLORERS = {137: "https://polygonscan.com/tx/", 80002: "https://amoy.polygonscan.com/tx/"}


def transaction_url(tx_hash: str | None) -> str | None:
    """Where people can look a transaction up, on this chain's public explorer (if any)."""
    base = EXPLORERS.get(chain_id())
    return f"{base}{tx_hash}" if base and tx_hash else None
