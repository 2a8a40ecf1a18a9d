"""A token bucket per client, kept atomically in Redis (GCRA in one Lua script).

Fixed and sliding windows block a client for the rest of a window once spent; a token
bucket admits it again at the refill rate. ``AppRateLimit.take`` runs GCRA (the generic
cell rate algorithm, an exact token bucket kept as one timestamp per client) on the
Redis server's clock, so every gunicorn worker shares one bucket per client, in one
round trip per request. The bucket refills at ``rate_per_second`` and holds
``capacity`` tokens. Rate limiting fails open: if Redis cannot be reached, requests
are admitted (logged), unlike idempotency, which fails closed.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass

import redis

log = logging.getLogger(__name__)

# GCRA: KEYS[1] holds the theoretical arrival time (TAT) in microseconds of the
# Redis clock. ARGV: emission interval (µs per token), capacity (tokens), cost
# (0 = only look). Returns allowed, remaining, µs until full, µs until allowed.
TOKEN_BUCKET_LUA = """
local interval = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local stored = redis.call('GET', KEYS[1])
-- Work in microseconds relative to now: absolute times (~1e15) lose precision.
local ahead = 0
if stored then
  ahead = math.max(tonumber(stored) - now, 0)
end
local tolerance = interval * capacity
local new_ahead = ahead + interval * cost
local allowed = 0
local wait = 0
if new_ahead <= tolerance + 1 then
  allowed = 1
  if cost > 0 then
    local ttl_ms = math.ceil(new_ahead / 1000) + 1000
    redis.call('SET', KEYS[1], string.format('%.1f', now + new_ahead), 'PX', ttl_ms)
  end
  ahead = new_ahead
else
  wait = new_ahead - tolerance
end
local remaining = math.floor((tolerance - ahead) / interval + 0.001)
if remaining < 0 then remaining = 0 end
if remaining > capacity then remaining = capacity end
return {allowed, remaining, math.ceil(ahead), math.ceil(wait)}
"""


@dataclass(frozen=True)
class BucketState:
    """One client's bucket after a hit or a look."""

    allowed: bool
    remaining: int
    capacity: int
    full_in: float  # seconds until the bucket is full again
    retry_in: float  # seconds until a request of this cost would be admitted (0 if now)
    known: bool = True  # False when Redis could not be asked (the request was admitted)

    @property
    def retry_after_seconds(self) -> int:
        """The integer Retry-After for a refused request: at least 1 second."""
        return max(1, math.ceil(self.retry_in))


class AppRateLimit:
    """One bucket per client key: ``rate_per_second`` refill, ``capacity`` tokens."""

    def __init__(self, client: redis.Redis, *, rate_per_second: float, capacity: int,
                 key_prefix: str) -> None:
        """Buckets live under ``key_prefix:<client>`` in ``client``'s Redis."""
        self.capacity = int(capacity)
        self.key_prefix = key_prefix
        # Arguments of every call, formatted once: µs per token, capacity.
        self._interval = repr(1_000_000 / float(rate_per_second))
        self._script = client.register_script(TOKEN_BUCKET_LUA)
        self._last_warning = 0.0
        self._warning_lock = threading.Lock()

    def take(self, client_key: str, cost: int = 1) -> BucketState:
        """Take ``cost`` tokens if the bucket holds them (cost 0 only looks)."""
        capacity = self.capacity
        try:
            allowed, remaining, full_us, wait_us = self._script(
                [f"{self.key_prefix}:{client_key}"], [self._interval, capacity, cost])
        except redis.exceptions.RedisError as exc:
            self._warn(exc)
            return BucketState(allowed=True, remaining=capacity, capacity=capacity,
                               full_in=0.0, retry_in=0.0, known=False)
        return BucketState(allowed=bool(allowed), remaining=int(remaining), capacity=capacity,
                           full_in=int(full_us) / 1e6, retry_in=int(wait_us) / 1e6)

    def _warn(self, exc: Exception) -> None:
        with self._warning_lock:
            if time.monotonic() - self._last_warning > 10:
                self._last_warning = time.monotonic()
                log.warning("rate-limit store unreachable, admitting requests: %s",
                            type(exc).__name__)
