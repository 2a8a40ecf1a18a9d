"""Sandbox venue settings: chain id, contract addresses used in signatures, behaviour switches."""

from __future__ import annotations

from dataclasses import dataclass

from py_clob_client_v2.config import get_contract_config

DEFAULT_CHAIN_ID = 137
_POLYGON = get_contract_config(DEFAULT_CHAIN_ID)

# Deposit wallets and collateral (ACCOUNTS.md 2.1, 5, 6): Polygon's addresses.
DEPOSIT_WALLET_FACTORY = "0x00000000000Fb5C9ADea0298D729A0CB3823Cc07"
DEPOSIT_WALLET_BEACON = "0x7A18EDfe055488A3128f01F563e5B479D92ffc3a"
POSITION_MANAGER = "0x006F54F7f9A22e0000CC2AB60031000000ae9fEF"
USDC_E = "0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174"
COLLATERAL_ONRAMP = "0x93070a847efEf7F70739046A929D47a521F5B8ee"
CTF_COLLATERAL_ADAPTER = "0xAdA100Db00Ca00073811820692005400218FcE1f"
NEG_RISK_COLLATERAL_ADAPTER = "0xadA2005600Dec949baf300f4C6120000bDB6eAab"
# The v1 NegRiskAdapter ("CLOB v1, deprecated"): relayer calls to it are refused since
# 2026-07-17 (ACCOUNTS.md §5, §11).
NEG_RISK_ADAPTER_V1 = "0xd91E80cF2E7be2e162c6513ceD06f1dD0dA35296"
# The builder credentials every sandbox accepts at its relayer, so `copytrade up` works out
# of the box (README "Sandbox relayer and accounts"); never valid anywhere else.
DEV_BUILDER_KEY = "00000000-0000-4000-8000-00000000b1d0"
DEV_BUILDER_SECRET = "c2FuZGJveC1idWlsZGVyLXNlY3JldC1ub3QtZm9yLXVzZQ=="
DEV_BUILDER_PASSPHRASE = "sandbox-builder-passphrase"

# The oracle used to derive condition ids (UMA CTF adapter address seen in Gamma's resolvedBy).
DEFAULT_ORACLE = "0x157Ce2d672854c848c9b79C49a8Cc6cc89176a49"


@dataclass
class SandboxConfig:
    """What the sandbox signs against and how it behaves; defaults match Polygon mainnet."""

    chain_id: int = DEFAULT_CHAIN_ID
    exchange: str = _POLYGON.exchange_v2
    neg_risk_exchange: str = _POLYGON.neg_risk_exchange_v2
    exchange_v3: str = _POLYGON.exchange_v3  # position-id markets; every market at version 3
    # The order version GET /version announces; orders signed for another get
    # order_version_mismatch (the control API bumps it).
    order_version: int = 2
    collateral: str = _POLYGON.collateral
    conditional_tokens: str = _POLYGON.conditional_tokens
    oracle: str = DEFAULT_ORACLE
    # Seeds API-key derivation, so the same (address, nonce) always yields the same creds.
    server_secret: bytes = b"copytrade-sandbox-venue"
    # Resting "house" orders around each market's fair price, so market orders fill.
    house_liquidity: bool = True
    # Seconds between scripted whale trades when whales run.
    whale_interval: float = 3.0
    # The chain whose ConditionalTokens the Data API indexes (empty: the ledger only).
    chain_rpc_url: str = ""
    chain_ctf: str = ""
    # Deposit wallets: CREATE2 derivation (beacon clones) and the relayer's `to` check.
    deposit_wallet_factory: str = DEPOSIT_WALLET_FACTORY
    deposit_wallet_beacon: str = DEPOSIT_WALLET_BEACON
    position_manager: str = POSITION_MANAGER
    usdc_e: str = USDC_E
    collateral_onramp: str = COLLATERAL_ONRAMP
    ctf_collateral_adapter: str = CTF_COLLATERAL_ADAPTER
    neg_risk_collateral_adapter: str = NEG_RISK_COLLATERAL_ADAPTER
    neg_risk_adapter_v1: str = NEG_RISK_ADAPTER_V1  # the relayer refuses calls to it
    # The venue's account rules at order time, as the venue applies them to new API users:
    # makers must be registered deposit wallets unless allowlisted (type 0) or grandfathered
    # (types 1/2), and orders need the CLOB's cached balance and allowance of their
    # exchange. On by default; off only for a scenario that needs the rules out of the way
    # (README "Sandbox relayer and accounts").
    strict_accounts: bool = True
    # Seconds an open market lives before it resolves by itself (lifespans.py; 0: markets
    # never end), and whether a successor is listed in the place of each one that ends.
    market_lifetime: float = 0.0
    replenish_markets: bool = True
    # Seconds between a relayer transaction's states (NEW, EXECUTED, MINED, CONFIRMED).
    relayer_step_seconds: float = 1.0
    # Builder credentials (key, secret, passphrase) the relayer accepts from the start.
    dev_builder: tuple[str, str, str] = (DEV_BUILDER_KEY, DEV_BUILDER_SECRET,
                                         DEV_BUILDER_PASSPHRASE)

    def exchange_for(self, neg_risk: bool) -> str:
        """The V2 exchange address orders of a (neg-risk or plain) market are signed for."""
        return self.neg_risk_exchange if neg_risk else self.exchange

    def signing_domain(self, neg_risk: bool, position_ids: bool) -> tuple[str, str]:
        """(exchange, domain version) a market's orders must be signed for now."""
        if position_ids or self.order_version >= 3:
            return self.exchange_v3, "3"
        return self.exchange_for(neg_risk), "2"
