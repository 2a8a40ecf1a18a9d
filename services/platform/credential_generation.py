"""The credential generation: one Redis counter that moves whenever a credential's standing
or its account changes, so every process drops what it cached about credentials.

A web process may keep a verified API key and its account in memory for a few seconds
(``services/identity/verified_keys.py``), tagged with the generation read *before* the
database was: the rate limiter's script reads the counter in the same round trip as the
request's token (``services/platform/ratelimit.py``), so a cached entry is used only while the
counter still reads what it read then. Whatever revokes a key, disables or enables an
account, changes its tier or limits or ends its sessions calls ``bump`` *after* its write is
committed: a process that reads the new value reads the new rows too.

When the counter is absent (a new or flushed Redis) the limiter's script sets it to the
server's clock in microseconds, a value no earlier generation held, so entries cached
before a flush never match again.
"""

from __future__ import annotations

import logging
import threading
import time

import redis

from services.platform.runtime import runtime

log = logging.getLogger(__name__)

KEY_SUFFIX = "credentials:generation"

_warned = [0.0]
_warning_lock = threading.Lock()


def key(prefix: str) -> str:
    """The counter's Redis key under the deployment's ``REDIS_PREFIX``."""
    return prefix + KEY_SUFFIX


def bump() -> bool:
    """Move the generation (after a committed change to a key or an account); False when
    Redis could not be reached: other processes then stop serving their cached entries
    within ``API_KEY_CACHE_SECONDS`` (each entry's own bound), not at once."""
    built = runtime()
    try:
        built.redis().incr(key(built.settings.redis_prefix))
    except (redis.exceptions.RedisError, OSError) as exc:
        with _warning_lock:
            if time.monotonic() - _warned[0] > 10:
                _warned[0] = time.monotonic()
                log.warning("credential generation not moved (Redis unreachable: %s); cached "
                            "API keys expire on their own within API_KEY_CACHE_SECONDS",
                            type(exc).__name__)
        return False
    return True
