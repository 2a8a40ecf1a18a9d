"""Sandbox venue settings: chain id, contract addresses used in signatures, behaviour switches."""

from __future__ import annotations

from dataclasses import dataclass, field

from py_clob_client_v2.config import get_contract_config

DEFAULT_CHAIN_ID = 137
_POLYGON = get_contract_config(DEFAULT_CHAIN_ID)

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
    # Refuse EOA/proxy/Safe makers (the venue's deposit-wallet-only mode for new accounts).
    refuse_eoa_makers: bool = False
    # Makers still allowed as EOAs when refuse_eoa_makers is on ("old accounts").
    legacy_makers: set[str] = field(default_factory=set)
    # The chain whose ConditionalTokens the Data API indexes (empty: the ledger only).
    chain_rpc_url: str = ""
    chain_ctf: str = ""

    def exchange_for(self, neg_risk: bool) -> str:
        """The V2 exchange address orders of a (neg-risk or plain) market are signed for."""
        return self.neg_risk_exchange if neg_risk else self.exchange

    def signing_domain(self, neg_risk: bool, position_ids: bool) -> tuple[str, str]:
        """(exchange, domain version) a market's orders must be signed for now."""
        if position_ids or self.order_version >= 3:
            return self.exchange_v3, "3"
        return self.exchange_for(neg_risk), "2"
