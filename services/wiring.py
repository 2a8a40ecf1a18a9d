"""Builds a process's Runtime from Settings: the one place that knows every part.

Kept apart from ``services.runtime`` (the accessor the parts themselves import), so that
no module imports, even lazily, a module that imports it.
"""

from __future__ import annotations

from config import Settings
from services import chain_access, jobs, redis_client, venues
from services.runtime import Runtime


def build_runtime(settings: Settings) -> Runtime:
    """A Runtime for ``settings``; starts the embedded Redis when no REDIS_URL is set."""
    redis_url = redis_client.resolve_url(settings.redis_url, settings.instance_path)
    return Runtime(
        settings=settings,
        venue=venues.VenueAccess(venues.venue_config(settings)),
        chain=chain_access.ChainAccess(chain_access.from_settings(settings)),
        redis_url=redis_url,
        jobs=jobs.JobsConfig(redis_url=redis_url, prefix=settings.redis_prefix),
    )
