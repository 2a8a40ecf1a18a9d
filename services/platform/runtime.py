"""The process's runtime: venue clients, chain access, Redis and the job queue, built once.

``create_app`` and the worker build one ``Runtime`` from ``Settings``
(``services.platform.wiring.build_runtime``) and ``install`` it;
services reach it through ``runtime()``, which raises until one is installed. Nothing
here falls back to the environment: settings come only from ``config.load``.
No Flask: the worker and the CLI use it too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import redis

from config import Settings

if TYPE_CHECKING:  # web3 and the venue's signing stack cost a second to import: a CLI
    # command or job that never touches them (status, jobs retry) must not pay for it
    from services.platform.chain_settings import ChainAccess
    from services.platform.venue_access import VenueAccess


@dataclass(frozen=True)
class JobsConfig:
    """Where jobs go: the Redis server and the deployment's key prefix (the runtime's queue)."""

    redis_url: str
    prefix: str


@dataclass(frozen=True)
class Runtime:
    """What a process talks to: the venue, the chain, Redis and the job queue."""

    settings: Settings
    venue: VenueAccess
    chain: ChainAccess
    redis_url: str  # resolved: the embedded server's unix:// URL when none is configured
    jobs: JobsConfig

    def redis(self) -> redis.Redis:
        """The shared Redis client of this runtime."""
        from services.platform import redis_client

        return redis_client.connect(self.redis_url)

    def close(self) -> None:
        """Close pooled venue connections (a later use opens new ones)."""
        self.venue.close()


_lock = threading.Lock()
_installed: Runtime | None = None


def install(built: Runtime | None) -> Runtime | None:
    """Make ``built`` this process's runtime (None: none); returns the one it replaces."""
    global _installed
    with _lock:
        previous, _installed = _installed, built
    return previous


def runtime() -> Runtime:
    """This process's runtime; RuntimeError when none was ever built and installed."""
    current = _installed
    if current is None:
        raise RuntimeError("the runtime was never built: create_app() or the worker builds "
                           "it (runtime.install(wiring.build_runtime(settings)))")
    return current


def close() -> None:
    """Uninstall this process's runtime and close its connections."""
    previous = install(None)
    if previous is not None:
        previous.close()


@contextmanager
def replaced(**parts: Any) -> Iterator[Runtime]:
    """Run the block with some parts of the runtime replaced (``chain=...``), then restore."""
    previous = runtime()
    swapped = replace(previous, **parts)
    install(swapped)
    try:
        yield swapped
    finally:
        install(previous)
