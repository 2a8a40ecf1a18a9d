"""The contract addresses account set-up depends on, Polygon's by default.

Field names follow the official SDK's environment config (``polymarket-client``), so a
table here and an SDK environment describe the same chain field by field (tests rely on it);
the collateral ramps, which the SDK does not use, are ours alone.
The dev chain builds its own table with its own addresses (a setting, later).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountContracts:
    """Addresses for wallet derivation, approvals and collateral on one chain."""

    chain_id: int = 137
    # Deposit wallets (ACCOUNTS.md §2.1): factory, beacon, legacy UUPS implementation.
    deposit_wallet_factory: str = "0x00000000000Fb5C9ADea0298D729A0CB3823Cc07"
    deposit_wallet_beacon: str = "0x7A18EDfe055488A3128f01F563e5B479D92ffc3a"
    deposit_wallet_implementation: str = "0x58CA52ebe0DadfdF531Cde7062e76746de4Db1eB"
    # Legacy account wallets (types 1 and 2), derived only to classify existing accounts.
    proxy_factory: str = "0xaB45c5A4B0c941a2F231C04C3f49182e1A254052"
    proxy_implementation: str = "0x44e999d5c2F66Ef0861317f9A4805AC2e90aEB4f"
    safe_factory: str = "0xaacFeEa03eb1561C4e67d661e40682Bd20E3541b"
    safe_init_code_hash: str = (
        "0x2bce2127ff07fb632d16c8347c4ebf501f4841168bed00d9e6ef715ddb6fcecf")
    # The relayer's legacy PROXY and SAFE transactions (ACCOUNTS.md §10): the relay hub a
    # proxy transaction is signed for, and the MultiSend a Safe delegatecalls for a batch.
    relay_hub: str = "0xD216153c06E857cD7f72665E0aF1d7D82172F494"
    safe_multisend: str = "0xA238CBeb142c10Ef7Ad8442C6D1f9E89e07e7761"
    # Tokens and the spenders of the required approvals (ACCOUNTS.md §5, §6).
    collateral_token: str = "0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB"
    conditional_tokens: str = "0x4D97DCd97eC945f40cF65F87097ACe5EA0476045"
    position_manager: str = "0x006F54F7f9A22e0000CC2AB60031000000ae9fEF"
    standard_exchange: str = "0xE111180000d2663C0091e4f400237545B87B996B"
    neg_risk_exchange: str = "0xe2222d279d744050d28e00520010520000310F59"
    collateral_adapter: str = "0xAdA100Db00Ca00073811820692005400218FcE1f"
    neg_risk_collateral_adapter: str = "0xadA2005600Dec949baf300f4C6120000bDB6eAab"
    protocol_v2_router: str = "0x12121212006e4CD160D18e3f00711DA5c3372600"
    exchange_v3: str = "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa"
    perps_deposit_contract: str = "0xDCa4af75705dbB50f62437045afF9921947917d2"
    auto_redeem_operator: str = "0xa1200000d0002264C9a1698e001292D00E1b00af"
    binary_module: str = "0x1000008dD9001B968442c1000017eaE6E0dA00Ba"
    neg_risk_module: str = "0x200000900045e3B6259600682756002200028933"
    # Collateral ramps (§6): USDC.e in through the onramp's wrap, pUSD out through the
    # offramp's unwrap. Not in the SDK's table (it has no wrap), so not cross-checked there.
    usdc_e: str = "0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174"
    collateral_onramp: str = "0x93070a847efEf7F70739046A929D47a521F5B8ee"
    collateral_offramp: str = "0x2957922Eb93258b93368531d39fAcCA3B4dC5854"


POLYGON = AccountContracts()

__all__ = ["POLYGON", "AccountContracts"]
