"""Who runs which copy target, in Redis: target leases, engine heartbeats, control nudges.

Every active config is run by the worker whose copy engine holds the lease on the
config's target wallet (``<REDIS_PREFIX>copy:lease:<target>``, value = engine name,
a few seconds of TTL renewed every second). Leasing by target keeps one watcher per
target across the whole deployment, and makes each config owned by exactly one
worker. A dead worker stops renewing; its leases expire and another engine claims
them on its next sweep.

The web side only nudges: ``publish`` enqueues the ``copy.sync`` control job (which
wakes an engine to sweep at once) and posts on a pub/sub channel the owning engine
listens to. Engines also sweep the database every second, so a lost nudge only costs
latency, never correctness.
"""

from __future__ import annotations

import json
from typing import Any

import redis

from services import jobs

# Renew this engine's leases; one that expired while nobody else took it is taken back
# (a late heartbeat is not a reason to drop a target no one else runs).
LEASE_SCRIPT_RENEW = """
local renewed = {}
for i, key in ipairs(KEYS) do
  local holder = redis.call('GET', key)
  if holder == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
    renewed[#renewed + 1] = i
  elseif not holder then
    redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
    renewed[#renewed + 1] = i
  end
end
return renewed
"""

LEASE_SCRIPT_RELEASE = """
local released = 0
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('DEL', key)
    released = released + 1
  end
end
return released
"""

CONTROL_JOB = "copy.sync"


def prefix() -> str:
    """The deployment's Redis key prefix."""
    return jobs.current_config().prefix


def connection() -> redis.Redis:
    """The shared Redis client."""
    return jobs.connection()


def lease_key(target: str, key_prefix: str | None = None) -> str:
    """The Redis key of a target's lease."""
    return f"{key_prefix if key_prefix is not None else prefix()}copy:lease:{target.lower()}"


def engine_key(name: str, key_prefix: str | None = None) -> str:
    """The Redis hash of a copy engine's heartbeat."""
    return f"{key_prefix if key_prefix is not None else prefix()}copy:engine:{name}"


def engines_key(key_prefix: str | None = None) -> str:
    """The set of copy engine names of this deployment."""
    return f"{key_prefix if key_prefix is not None else prefix()}copy:engines"


def channel(key_prefix: str | None = None) -> str:
    """The pub/sub channel engines listen on for config changes."""
    return f"{key_prefix if key_prefix is not None else prefix()}copy:control"


def owner_of_target(target: str) -> str | None:
    """The engine (worker) name holding the target's lease, or None."""
    raw = connection().get(lease_key(target))
    return raw.decode() if raw else None


def engine_heartbeat(name: str) -> str | None:
    """When the engine last heartbeated (ISO time), None when it is gone."""
    raw = connection().hget(engine_key(name), "heartbeat_at")
    return raw.decode() if raw else None


def live_engines(client: redis.Redis, key_prefix: str) -> list[str]:
    """Names of engines whose heartbeat has not expired (expired ones are forgotten)."""
    names = sorted(n.decode() for n in client.smembers(engines_key(key_prefix)))
    if not names:
        return []
    with client.pipeline() as pipe:
        for name in names:
            pipe.exists(engine_key(name, key_prefix))
        alive = pipe.execute()
    dead = [n for n, ok in zip(names, alive, strict=True) if not ok]
    if dead:
        client.srem(engines_key(key_prefix), *dead)
    return [n for n, ok in zip(names, alive, strict=True) if ok]


def publish(op: str, config_id: str) -> None:
    """Nudge the workers about a config change (``copy.start``/``stop``/``reload``)."""
    client = connection()
    client.publish(channel(), json.dumps({"op": op, "config_id": config_id}))
    jobs.enqueue(CONTROL_JOB, config_id, queue="high", timeout=30,
                 job_id=jobs.logical_job_id(CONTROL_JOB, config_id))


def decode_message(message: Any) -> dict[str, Any] | None:
    """A control message from the pub/sub channel, or None when it is not one."""
    if not isinstance(message, dict) or message.get("type") != "message":
        return None
    try:
        return json.loads(message["data"])
    except (TypeError, ValueError):
        return None
