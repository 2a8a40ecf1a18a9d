"""Shared inputs of the SDK cross-checks: keys, owners, and two contract tables."""

from __future__ import annotations

import dataclasses
from typing import Any

from eth_hash.auto import keccak

from venue.accounts import POLYGON, AccountContracts
from venue.signing import OrderKey

# Deterministic keys (never funded anywhere): keccak of a label.
KEYS = [OrderKey(keccak(f"copytrade sdk cross-check {i}".encode())) for i in range(6)]
OWNERS = [key.address for key in KEYS]

# A dev chain's table: every address differs from Polygon's, so a field read from the wrong
# place (or a Polygon constant baked in) changes the answer.
DEV = AccountContracts(
    chain_id=31337,
    deposit_wallet_factory="0x5FbDB2315678afecb367f032d93F642f64180aa3",
    deposit_wallet_beacon="0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
    deposit_wallet_implementation="0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0",
    proxy_factory="0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9",
    proxy_implementation="0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9",
    safe_factory="0x5FC8d32690cc91D4c39d9d3abcBD16989F875707",
    safe_init_code_hash="0x" + keccak(b"dev safe").hex(),
    relay_hub="0x3Aa5ebB10DC797CAC828524e59A333d0A371443c",
    safe_multisend="0xc6e7DF5E7b4f2A278906862b61205850344D4e7d",
    collateral_token="0x0165878A594ca255338adfa4d48449f69242Eb8F",
    conditional_tokens="0xa513E6E4b8f2a923D98304ec87F64353C4D5C853",
    position_manager="0x2279B7A0a67DB372996a5FaB50D91eAA73d2eBe6",
    standard_exchange="0x8A791620dd6260079BF849Dc5567aDC3F2FdC318",
    neg_risk_exchange="0x610178dA211FEF7D417bC0e6FeD39F05609AD788",
    collateral_adapter="0xB7f8BC63BbcaD18155201308C8f3540b07f84F5e",
    neg_risk_collateral_adapter="0xA51c1fc2f0D1a1b8494Ed1FE312d7C3a78Ed91C0",
    protocol_v2_router="0x0DCd1Bf9A1b36cE34237eEaFef220932846BCD82",
    exchange_v3="0x9A676e781A523b5d0C0e43731313A708CB607508",
    perps_deposit_contract="0x0B306BF915C4d645ff596e518fAf3F9669b97016",
    auto_redeem_operator="0x959922bE3CAee4b8Cd9a407cc3ac1C251C2007B1",
    binary_module="0x9A9f2CCfdE556A7E9Ff0848998Aa4a0CFD8863AE",
    neg_risk_module="0x68B1D87F95878fE05B998F19b66F4baba5De1aed",
)
TABLES = {"polygon": POLYGON, "dev": DEV}


def contracts_json(contracts: AccountContracts) -> dict[str, Any]:
    """The table as the SDK snippets' ``payload["contracts"]``."""
    return dataclasses.asdict(contracts)
