"""Builds a process's Runtime from Settings: the one place that knows every part.

Kept apart from ``services.platform.runtime`` (the accessor the parts themselves import), so that
no module imports, even lazily, a module that imports it.
"""

from __future__ import annotations

from chain.urls import has_credentials
from config import Settings
from services.platform import chain_settings, logs, redis_client, venue_access
from services.platform.runtime import JobsConfig, Runtime


def build_runtime(settings: Settings) -> Runtime:
    """A Runtime for ``settings``; starts the embedded Redis when no REDIS_URL is set."""
    redis_url = redis_client.resolve_url(settings.redis_url, settings.instance_path)
    # An RPC URL's path is often its API key; a venue URL is secret only with credentials.
    venue_urls = (settings.venue.gamma_url, settings.venue.clob_url, settings.venue.data_url,
                  settings.venue.rtds_url)
    logs.protect_urls(settings.chain.rpc_url,
                      *(url for url in venue_urls if url and has_credentials(url)))
    return Runtime(
        settings=settings,
        venue=venue_access.VenueAccess(venue_access.venue_config(settings)),
        chain=chain_settings.ChainAccess(chain_settings.from_settings(settings)),
        redis_url=redis_url,
        jobs=JobsConfig(redis_url=redis_url, prefix=settings.redis_prefix),
    )
