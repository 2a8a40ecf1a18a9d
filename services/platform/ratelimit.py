"""A token bucket per client, kept atomically in Redis (GCRA in one Lua script), as a
strategy and a storage of the ``limits`` library, which flask-limiter runs.

Fixed and sliding windows block a client for the rest of a window once spent; a token
bucket admits it again at the refill rate. ``limits`` ships windows only, so we add the
bucket through its own extension points:

* ``TokenBucketRedisStorage``, a ``limits`` storage (registered, like every storage, by its
  ``STORAGE_SCHEME``: ``tokenbucket+redis://``, ``tokenbucket+rediss://``,
  ``tokenbucket+unix://``), whose one Lua script runs GCRA (the generic cell rate algorithm,
  an exact token bucket kept as one timestamp per client) on the Redis server's clock, so
  every gunicorn worker shares one bucket per client, in one round trip per request;
* ``TokenBucketRateLimiter``, a ``limits`` strategy registered in
  ``limits.strategies.STRATEGIES`` as ``"token-bucket"`` (the name flask-limiter looks
  strategies up by).

A limit ``N per T`` refills at N/T tokens per second; the bucket holds the storage's
``burst`` tokens (the limit's N when none is set). Rate limiting fails open: if Redis
cannot be reached, requests are admitted (logged), unlike idempotency, which fails closed.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

import redis
from limits.limits import RateLimitItem
from limits.storage import RedisStorage
from limits.strategies import STRATEGIES, RateLimiter
from limits.util import WindowStats

log = logging.getLogger(__name__)

STRATEGY_NAME = "token-bucket"
SCHEME_PREFIX = "tokenbucket+"

# GCRA: KEYS[1] holds the theoretical arrival time (TAT) in microseconds of the
# Redis clock. ARGV: emission interval (µs per token), capacity (tokens), cost
# (0 = only look). Returns allowed, remaining, µs until full, µs until allowed, and, when
# KEYS[2] names the credential generation (services/platform/credential_generation.py), its
# value, read in this same round trip (set to the clock's µs when absent: a value no
# earlier generation held, so a flushed Redis never matches an old one).
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
local generation = false
if KEYS[2] then
  generation = redis.call('GET', KEYS[2])
  if not generation then
    generation = string.format('%.0f', now)
    redis.call('SET', KEYS[2], generation)
  end
end
return {allowed, remaining, math.ceil(ahead), math.ceil(wait), generation}
"""


IPV6_CLIENT_PREFIX = 64  # one subscriber's share: a host picks any address inside its /64


def client_key(ip: str | None, unknown: str = "unknown") -> str:
    """The client an address stands for in per-IP budgets: an IPv4 address itself, an IPv6
    one's /64 (an IPv4-mapped one's IPv4); ``unknown`` when there is none."""
    try:
        address = ipaddress.ip_address((ip or "").split("%", 1)[0])
    except ValueError:
        return (ip or unknown)[:64]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_CLIENT_PREFIX), strict=False))
    return str(address)


@dataclass(frozen=True)
class BucketState:
    """One client's bucket after a hit or a look."""

    allowed: bool
    remaining: int
    capacity: int
    full_in: float  # seconds until the bucket is full again
    retry_in: float  # seconds until a request of this cost would be admitted (0 if now)
    known: bool = True  # False when Redis could not be asked (the request was admitted)
    # The credential generation read in the same round trip (None: not asked, or unknown)
    generation: bytes | str | None = None

    @property
    def retry_after_seconds(self) -> int:
        """The integer Retry-After for a refused request: at least 1 second."""
        return max(1, math.ceil(self.retry_in))


def _bulk(value: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(value), value)


def _read_reply(sock: Any) -> list[Any]:
    """The script's answer read from ``sock``: integers, and bulk strings as bytes (None for
    nil); Redis's error line raised as redis-py raises it."""
    data = sock.recv(1024)
    while True:
        if not data:
            raise redis.exceptions.ConnectionError("Redis closed the connection")
        reply = _parse_reply(data)
        if reply is not None:
            return reply
        data += sock.recv(1024)


def _parse_reply(data: bytes) -> list[Any] | None:
    """An array of integers, bulk strings and nulls (RESP2 or RESP3), or an error; None while
    ``data`` is partial."""
    end = data.find(b"\r\n")
    if end < 0:
        return None
    kind = data[:1]
    if kind == b"-":
        message = data[1:end].decode(errors="replace")
        if message.startswith("NOSCRIPT"):
            raise redis.exceptions.NoScriptError(message)
        raise redis.exceptions.ResponseError(message)
    if kind != b"*":
        raise redis.exceptions.InvalidResponse(f"unexpected answer {data[:40]!r}")
    items: list[Any] = []
    position = end + 2
    for _ in range(int(data[1:end])):
        end = data.find(b"\r\n", position)
        if end < 0:
            return None
        kind = data[position:position + 1]
        if kind == b":":
            items.append(int(data[position + 1:end]))
            position = end + 2
        elif kind == b"_":  # RESP3's null (the connection may speak either)
            items.append(None)
            position = end + 2
        elif kind == b"$":
            size = int(data[position + 1:end])
            if size < 0:
                items.append(None)
                position = end + 2
                continue
            stop = end + 2 + size
            if len(data) < stop + 2:
                return None
            items.append(data[end + 2:stop])
            position = stop + 2
        else:
            raise redis.exceptions.InvalidResponse(f"unexpected answer {data[:40]!r}")
    return items


class TokenBucketRedisStorage(RedisStorage):
    """limits' Redis storage plus an atomic token bucket (GCRA in one Lua script)."""

    STORAGE_SCHEME = ["tokenbucket+redis", "tokenbucket+rediss", "tokenbucket+unix"]

    def __init__(self, uri: str, burst: int | None = None, generation_key: str | None = None,
                 **options: Any) -> None:
        """``burst``: tokens every bucket holds (None: the limit's own amount);
        ``generation_key``: the credential generation's key, read with every take."""
        self.burst = int(burst) if burst is not None else None
        self._keys: tuple[str, ...] = (generation_key,) if generation_key else ()
        self._heads: dict[str, bytes] = {}
        self._tails: dict[tuple[str, int, int], bytes] = {}
        self._last_warning = 0.0
        self._warning_lock = threading.Lock()
        self._intervals: dict[float, str] = {}
        # Each thread's own connection for the bucket's script (see ``_run_script``).
        self._lean = threading.local()
        super().__init__(uri.removeprefix(SCHEME_PREFIX), **options)

    def initialize_storage(self, uri: str) -> None:
        """Register limits' scripts and ours."""
        super().initialize_storage(uri)
        self.lua_token_bucket = self.get_connection().register_script(TOKEN_BUCKET_LUA)

    def _run_script(self, key: str, interval: str, capacity: int, cost: int) -> Any:
        """The bucket's script on this thread's own connection: one EVALSHA written and its
        answer read, without redis-py's client and pool layers around each command (their
        retries, events and pool bookkeeping cost several times the round trip itself).

        The connection is the pool's kind (its address, TLS, password and database), made
        for this thread and process; a broken one is dropped and the call tried once more
        on a new one (redis-py's client retries too), then the error raised (the caller
        admits the request, as with any Redis error). A script Redis no longer holds
        (restarted, flushed) goes through the registered ``Script``, which loads it again.
        """
        lean = self._lean
        for attempt in (1, 2):  # a connection Redis closed while idle: once more, anew
            connection = getattr(lean, "connection", None)
            if connection is None or lean.pid != os.getpid():
                # Made beside the pool, not by it: the pool counts what it makes against its
                # limit and this one is never given back, so request threads that come and
                # go would use the limit up for every other Redis user of the process.
                pool = self.get_connection().connection_pool
                connection = pool.connection_class(**pool.connection_kwargs)
                lean.connection, lean.pid = connection, os.getpid()
            try:
                # redis-py connects (address, TLS, AUTH, SELECT); the command is then written
                # and its one short answer read on the socket itself, packed and parsed here
                # (redis-py's packer and parser were most of the call's CPU).
                connection.connect()
                sock = connection._sock
                sock.sendall(self._command(key, interval, capacity, cost))
                return _read_reply(sock)
            except redis.exceptions.NoScriptError:
                return self.lua_token_bucket([key, *self._keys], [interval, capacity, cost])
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
                connection.disconnect()  # half-read or gone: never reused as it is
                lean.connection = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _command(self, key: str, interval: str, capacity: int, cost: int) -> bytes:
        """The EVALSHA as RESP bytes: its fixed parts packed once, the bucket's key each time."""
        sha = self.lua_token_bucket.sha
        head = self._heads.get(sha)
        if head is None:
            head = self._heads[sha] = (
                b"*%d\r\n" % (7 + len(self._keys))
                + _bulk(b"EVALSHA") + _bulk(sha.encode()) + _bulk(b"%d" % (1 + len(self._keys))))
        tail = self._tails.get((interval, capacity, cost))
        if tail is None:
            tail = self._tails[(interval, capacity, cost)] = b"".join(
                [*(_bulk(extra.encode()) for extra in self._keys), _bulk(interval.encode()),
                 _bulk(b"%d" % capacity), _bulk(b"%d" % cost)])
        return head + _bulk(key.encode()) + tail

    def capacity_for(self, amount: int) -> int:
        """Bucket capacity for a limit of ``amount`` per period."""
        return self.burst if self.burst is not None else amount

    def take(self, key: str, rate_per_second: float, capacity: int, cost: int = 1) -> BucketState:
        """Take ``cost`` tokens from bucket ``key`` if it holds them (cost 0 only looks)."""
        interval = self._intervals.get(rate_per_second)
        if interval is None:  # formatted once per rate: µs per token
            interval = self._intervals[rate_per_second] = repr(1_000_000 / rate_per_second)
        try:
            allowed, remaining, full_us, wait_us, *generation = self._run_script(
                self.prefixed_key(key), interval, capacity, cost)
        except (redis.exceptions.RedisError, OSError) as exc:
            self._warn(exc)
            return BucketState(allowed=True, remaining=capacity, capacity=capacity,
                               full_in=0.0, retry_in=0.0, known=False)
        return BucketState(allowed=bool(allowed), remaining=int(remaining), capacity=capacity,
                           full_in=int(full_us) / 1e6, retry_in=int(wait_us) / 1e6,
                           generation=generation[0] if generation else None)

    def _warn(self, exc: Exception) -> None:
        with self._warning_lock:
            if time.monotonic() - self._last_warning > 10:
                self._last_warning = time.monotonic()
                log.warning("rate-limit store unreachable, admitting requests: %s",
                            type(exc).__name__)


class TokenBucketRateLimiter(RateLimiter):
    """limits strategy: a token bucket refilled at the item's rate, holding the storage's
    burst; ``recent`` is what this thread's latest hit left, for the response headers."""

    def __init__(self, storage: Any) -> None:
        if not isinstance(storage, TokenBucketRedisStorage):
            raise NotImplementedError(
                f"the token-bucket strategy needs a tokenbucket+redis:// storage, "
                f"not {type(storage).__name__}")
        super().__init__(storage)
        self.buckets: TokenBucketRedisStorage = storage
        # Per thread, not per key: one request is served by one thread at a time, and the
        # headers describe the bucket as this request left it, without a second round trip.
        self._recent = threading.local()

    @staticmethod
    def rate_of(item: RateLimitItem) -> float:
        """Tokens per second the item allows."""
        return item.amount / item.get_expiry()

    def state(self, item: RateLimitItem, *identifiers: str, cost: int = 0) -> BucketState:
        """The bucket for ``identifiers``; takes ``cost`` tokens when it holds them."""
        bucket = self.buckets.take(item.key_for(*identifiers), self.rate_of(item),
                                   self.buckets.capacity_for(item.amount), cost)
        if cost:
            self._recent.state = bucket
        return bucket

    def recent(self) -> BucketState | None:
        """What this thread's latest hit left (None when there was none since ``forget``)."""
        return getattr(self._recent, "state", None)

    def forget(self) -> None:
        """Drop this thread's latest hit (its request is answered)."""
        self._recent.state = None

    def hit(self, item: RateLimitItem, *identifiers: str, cost: int = 1) -> bool:
        """Take ``cost`` tokens; False when the bucket holds fewer."""
        return self.state(item, *identifiers, cost=cost).allowed

    def test(self, item: RateLimitItem, *identifiers: str, cost: int = 1) -> bool:
        """Whether ``cost`` tokens could be taken now (takes none)."""
        return self.state(item, *identifiers).remaining >= cost

    def get_window_stats(self, item: RateLimitItem, *identifiers: str) -> WindowStats:
        """(time the bucket is full again, tokens left)."""
        bucket = self.state(item, *identifiers)
        return WindowStats(time.time() + bucket.full_in, bucket.remaining)


STRATEGIES[STRATEGY_NAME] = TokenBucketRateLimiter  # type: ignore[assignment]
