"""The contract addresses account set-up depends on, Polygon's by default.

Field names follow the official SDK's environment config (``polymarket-client``), so a
table here and an SDK environment describe the same chain field by field (tests rely on it);
the collateral ramps, which the SDK does not use, are ours alone. The addresses themselves
are ``config.POLYGON_CONTRACTS``'s; a deployment's table comes from its settings
(``services.platform.venue_access.account_contracts``).
"""

from __future__ import annotations

from dataclasses import dataclass

from config import POLYGON_CHAIN_ID
from config import POLYGON_CONTRACTS as _POLYGON


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountContracts:
    """Addresses for wallet derivation, approvals and collateral on one chain."""

    chain_id: int = POLYGON_CHAIN_ID
    # Deposit wallets (ACCOUNTS.md §2.1): factory, beacon, legacy UUPS implementation.
    deposit_wallet_factory: str = _POLYGON["DEPOSIT_WALLET_FACTORY_ADDRESS"]
    deposit_wallet_beacon: str = _POLYGON["DEPOSIT_WALLET_BEACON_ADDRESS"]
    deposit_wallet_implementation: str = _POLYGON["DEPOSIT_WALLET_IMPLEMENTATION_ADDRESS"]
    # Legacy account wallets (types 1 and 2), derived only to classify existing accounts.
    proxy_factory: str = _POLYGON["PROXY_FACTORY_ADDRESS"]
    proxy_implementation: str = _POLYGON["PROXY_IMPLEMENTATION_ADDRESS"]
    safe_factory: str = _POLYGON["SAFE_FACTORY_ADDRESS"]
    safe_init_code_hash: str = (
        "0x2bce2127ff07fb632d16c8347c4ebf501f4841168bed00d9e6ef715ddb6fcecf")
    # The relayer's legacy PROXY and SAFE transactions (ACCOUNTS.md §10).
    relay_hub: str = _POLYGON["RELAY_HUB_ADDRESS"]
    safe_multisend: str = _POLYGON["SAFE_MULTISEND_ADDRESS"]
    # Tokens and the spenders of the required approvals (ACCOUNTS.md §5, §6).
    collateral_token: str = _POLYGON["PUSD_ADDRESS"]
    conditional_tokens: str = _POLYGON["CTF_ADDRESS"]
    position_manager: str = _POLYGON["POSITION_MANAGER_ADDRESS"]
    standard_exchange: str = _POLYGON["CTF_EXCHANGE_ADDRESS"]
    neg_risk_exchange: str = _POLYGON["NEG_RISK_EXCHANGE_ADDRESS"]
    collateral_adapter: str = _POLYGON["CTF_COLLATERAL_ADAPTER_ADDRESS"]
    neg_risk_collateral_adapter: str = _POLYGON["NEG_RISK_COLLATERAL_ADAPTER_ADDRESS"]
    protocol_v2_router: str = _POLYGON["PROTOCOL_V2_ROUTER_ADDRESS"]
    exchange_v3: str = _POLYGON["EXCHANGE_V3_ADDRESS"]
    perps_deposit_contract: str = _POLYGON["PERPS_DEPOSIT_CONTRACT_ADDRESS"]
    auto_redeem_operator: str = _POLYGON["AUTO_REDEEM_OPERATOR_ADDRESS"]
    binary_module: str = _POLYGON["BINARY_MODULE_ADDRESS"]
    neg_risk_module: str = _POLYGON["NEG_RISK_MODULE_ADDRESS"]
    # Collateral ramps (§6): USDC.e in through the onramp's wrap, pUSD out through the
    # offramp's unwrap. Not in the SDK's table (it has no wrap), so not cross-checked there.
    usdc_e: str = _POLYGON["USDCE_ADDRESS"]
    collateral_onramp: str = _POLYGON["COLLATERAL_ONRAMP_ADDRESS"]
    collateral_offramp: str = _POLYGON["COLLATERAL_OFFRAMP_ADDRESS"]


POLYGON = AccountContracts()

__all__ = ["POLYGON", "AccountContracts"]
