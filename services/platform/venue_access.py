"""The runtime's venue part, built from settings: ``VenueAccess`` holds the venue's
configuration, the shared blocking client and the announced order version.

Services reach it through ``services.platform.venues`` (``client()``, ``async_client()``),
which reads the installed runtime.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING

from config import Settings
from venue.config import (
    POLYGON_CHAIN_ID,
    POLYMARKET_MARKET_WS_URL,
    VenueConfig,
    sandbox_market_ws_url,
)
from venue.order_versions import OrderVersion

if TYPE_CHECKING:  # the clients and the contract table bring the signing stack (a second
    # of imports): built on first use, so an operator's `copytrade status` does not pay
    from venue.accounts.contracts import AccountContracts
    from venue.client import AsyncVenueClient, VenueClient


def venue_config(settings: Settings) -> VenueConfig:
    """The VenueConfig the settings describe (Polymarket's or the sandbox's URLs)."""
    # Orders are signed for the venue's chain: Polygon's (or Amoy's) against Polymarket,
    # the sandbox's own (Polygon's id) otherwise, whatever local chain backs the wallets.
    polymarket = settings.venue.name == "polymarket"
    chain_id = settings.chain.chain_id if polymarket else POLYGON_CHAIN_ID
    # No setting of its own (the env names are fixed): Polymarket's channel, or the sandbox's
    # on the host of its CLOB.
    clob_url = settings.venue.clob_url
    market_ws_url = POLYMARKET_MARKET_WS_URL if polymarket else sandbox_market_ws_url(clob_url)
    return VenueConfig(
        gamma_url=settings.venue.gamma_url,
        clob_url=clob_url,
        data_url=settings.venue.data_url,
        rtds_url=settings.venue.rtds_url,
        market_ws_url=market_ws_url,
        chain_id=chain_id,
        exchange_address=settings.contracts.ctf_exchange,
        neg_risk_exchange_address=settings.contracts.neg_risk_exchange,
        exchange_v3_address=settings.contracts.exchange_v3 or None,
        behind_proxy=settings.venue.behind_proxy,
        rate_budget_share=settings.venue.rate_budget_share,
        relayer_url=settings.relayer.url,
    )


def account_contracts(settings: Settings) -> AccountContracts:
    """The one contract table wallet derivation, approvals and wraps use, from the settings.

    Addresses with a setting come from it (the dev chain exports its own); the rest, which
    name no variable (ARCHITECTURE.md), keep Polygon's.
    """
    from venue.accounts.contracts import POLYGON

    c = settings.contracts
    return dataclasses.replace(
        POLYGON,
        chain_id=settings.chain.chain_id,
        deposit_wallet_factory=c.deposit_wallet_factory,
        deposit_wallet_beacon=c.deposit_wallet_beacon,
        collateral_token=c.pusd,
        conditional_tokens=c.ctf,
        standard_exchange=c.ctf_exchange,
        neg_risk_exchange=c.neg_risk_exchange,
        collateral_adapter=c.ctf_collateral_adapter,
        neg_risk_collateral_adapter=c.neg_risk_collateral_adapter,
        usdc_e=c.usdce,
        collateral_onramp=c.collateral_onramp,
        position_manager=c.position_manager,
        protocol_v2_router=c.protocol_v2_router,
    )


class VenueAccess:
    """One venue's config, its shared blocking client (built on first use) and async clients."""

    def __init__(self, config: VenueConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._client: VenueClient | None = None
        # The order version the venue announced (GET /version), shared by every signer.
        self.order_version = OrderVersion()

    def client(self) -> VenueClient:
        """The shared blocking client (thread-safe; pooled connections)."""
        with self._lock:
            if self._client is None:
                from venue.client import VenueClient

                self._client = VenueClient(self.config)
            return self._client

    def async_client(self) -> AsyncVenueClient:
        """A new async client for a Trio task (owned and closed by its caller)."""
        from venue.client import AsyncVenueClient

        return AsyncVenueClient(self.config)

    def close(self) -> None:
        """Close the shared client's connections; the next ``client()`` opens a new one."""
        with self._lock:
            old, self._client = self._client, None
        if old is not None:
            old.close()
