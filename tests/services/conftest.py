"""Fixtures shared by the service tests."""

from tests.trading_support import (  # noqa: F401 - fixtures registered for this directory
    eoa_allowlist,
    fresh_venue_cache,
    make_eoa_trader,
    make_sandbox_market,
    make_trader,
    market,
    trader,
)
