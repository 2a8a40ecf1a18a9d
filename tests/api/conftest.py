"""Fixtures shared by the REST API tests."""

from tests.trading_support import (  # noqa: F401 - fixtures registered for this directory
    fresh_venue_cache,
    make_sandbox_market,
    make_trader,
    market,
    trader,
)
