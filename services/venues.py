"""The process's venue clients, built once from settings (no Flask: the worker uses it too)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from venue.client import AsyncVenueClient, VenueClient
from venue.config import (
    POLYGON_CHAIN_ID,
    POLYMARKET_MARKET_WS_URL,
    VenueConfig,
    sandbox_market_ws_url,
)

_lock = threading.Lock()
_config: VenueConfig | None = None
_client: VenueClient | None = None


def venue_config(settings: Mapping[str, Any]) -> VenueConfig:
    """The VenueConfig the settings describe (Polymarket's or the sandbox's URLs)."""
    # Orders are signed for the venue's chain: Polygon's (or Amoy's) against Polymarket,
    # the sandbox's own (Polygon's id) otherwise, whatever local chain backs the wallets.
    polymarket = settings["VENUE"] == "polymarket"
    chain_id = settings["CHAIN_ID"] if polymarket else POLYGON_CHAIN_ID
    # No setting of its own (the env names are fixed): Polymarket's channel, or the sandbox's
    # on the host of its CLOB.
    clob_url = settings["POLYMARKET_CLOB_URL"]
    market_ws_url = POLYMARKET_MARKET_WS_URL if polymarket else sandbox_market_ws_url(clob_url)
    return VenueConfig(
        gamma_url=settings["POLYMARKET_GAMMA_URL"],
        clob_url=clob_url,
        data_url=settings["POLYMARKET_DATA_URL"],
        rtds_url=settings.get("POLYMARKET_RTDS_URL") or "",
        market_ws_url=market_ws_url,
        chain_id=chain_id,
        exchange_address=settings.get("CTF_EXCHANGE_ADDRESS"),
        neg_risk_exchange_address=settings.get("NEG_RISK_EXCHANGE_ADDRESS"),
    )


def configure(settings: Mapping[str, Any]) -> None:
    """Point this process at the venue the settings name, replacing any earlier client."""
    global _config, _client
    config = venue_config(settings)
    with _lock:
        if _config == config and _client is not None:
            return
        old, _client, _config = _client, None, config
    if old is not None:
        old.close()


def client() -> VenueClient:
    """The shared blocking client (thread-safe; pooled connections)."""
    global _client
    with _lock:
        if _config is None:
            raise RuntimeError("services.venues.configure() was not called")
        if _client is None:
            _client = VenueClient(_config)
        return _client


def async_client() -> AsyncVenueClient:
    """A new async client for a Trio task (owned and closed by its caller)."""
    if _config is None:
        raise RuntimeError("services.venues.configure() was not called")
    return AsyncVenueClient(_config)
