"""The process's venue clients, as the services reach them (no Flask: the worker uses it too).

``client()``, ``async_client()`` and ``order_version()`` read the installed runtime's venue
part (``services.platform.venue_access.VenueAccess``).
"""

from __future__ import annotations

from services.platform.runtime import runtime
from venue.client import AsyncVenueClient, VenueClient
from venue.order_versions import OrderVersion


def client() -> VenueClient:
    """The runtime's shared blocking venue client."""
    return runtime().venue.client()


def order_version() -> OrderVersion:
    """The runtime venue's announced order version (read by signers, updated on a bump)."""
    return runtime().venue.order_version


def async_client() -> AsyncVenueClient:
    """A new async venue client for a Trio task (owned and closed by its caller)."""
    return runtime().venue.async_client()
