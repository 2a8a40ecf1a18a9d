"""Who runs which copy target, in Redis: target leases and copy engines' heartbeats.

Every active config is run by the worker whose copy engine holds the lease on the
config's target wallet (``<REDIS_PREFIX>copy:lease:<target>``, value = engine name, a few
seconds of TTL renewed every second). Leasing by target keeps one watcher per target
across the whole deployment, and makes each config owned by exactly one worker. A dead
worker stops renewing; its leases expire and another engine claims them on its next sweep.

A lease is ``SET <prefix>copy:lease:<target> <engine> NX PX <ttl>``; renewals and
releases run as Lua scripts that only touch keys still holding this engine's name, so
an engine can never renew or drop a lease another engine took over. The calls block
(the engine runs them in threads); the operator's commands use the same key layout.

Fencing: every take-over of a lease (a claim, an operator's move) increments the target's
fencing token (``<prefix>copy:fence:<target>``, no TTL) in the same script, and hands the
new token to the new holder. The holder registers it in the database
(``services.copying.fences``) before it runs the target, and every intent it writes
carries it: the intent write refuses a token older than the registered one, so an engine
that lost its lease while cut off cannot record (hence cannot send) a copy. A lease that
expired is not taken back by a late renewal: it is claimed again, with a new token.

An operator moves a target (``copytrade executors move``) with ``move_target``: the lease
is handed to another live engine (same remaining TTL) and ``<prefix>copy:moved:<target>``
names the engine it was taken from for a while (``<prefix>copy:moved`` indexes the
targets so marked). That engine sees another holder at its
next renewal and drops the target; the new holder adopts it at its next sweep (nudged at
once); while the mark lasts the old engine does not claim it back and the new one does
not shed it to keep its fair share.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

import redis

from services.platform import copy_control

# Renew the leases named (KEYS[2:]) and keep them in this engine's set of held leases
# (KEYS[1]; ARGV[3] = '1': the set becomes exactly the kept ones). One that expired is not
# taken back: the engine stopped sending by its own clock before it could expire, and takes
# it again by a claim (a new fencing token, registered in the database before the target
# runs again).
LEASE_SCRIPT_RENEW = """
if ARGV[3] == '1' then redis.call('DEL', KEYS[1]) end
local lost = {}
for i = 2, #KEYS do
  local key = KEYS[i]
  if redis.call('GET', key) == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
    redis.call('SADD', KEYS[1], key)
  else
    redis.call('SREM', KEYS[1], key)
    lost[#lost + 1] = i - 1
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return lost
"""

# Renew every lease in this engine's set of held leases (KEYS[1]), by exception: one short
# command a heartbeat, whatever the engine runs; the answer names only the lease keys lost
# (taken over or expired; they leave the set). False, touching nothing, when the set does
# not hold as many leases as the engine runs (ARGV[3]): the engine then renews the leases
# it runs by name, which makes the set exactly those again.
LEASE_SCRIPT_RENEW_HELD = """
if redis.call('SCARD', KEYS[1]) ~= tonumber(ARGV[3]) then return false end
local lost = {}
for _, key in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
  else
    redis.call('SREM', KEYS[1], key)
    lost[#lost + 1] = key
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return lost
"""

# Take each free lease (KEYS: the engine's set of held leases, then lease, fence, lease,
# fence, ...); each taken one joins the set and its fencing token moves on: {index, token}
# pairs of the targets taken.
LEASE_SCRIPT_CLAIM = """
local taken = {}
for i = 2, #KEYS, 2 do
  if redis.call('SET', KEYS[i], ARGV[1], 'NX', 'PX', ARGV[2]) then
    redis.call('SADD', KEYS[1], KEYS[i])
    taken[#taken + 1] = i / 2
    taken[#taken + 1] = redis.call('INCR', KEYS[i + 1])
  end
end
if #taken > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return taken
"""

# The fencing token of a lease this engine holds: moved past ARGV[2] (the database's,
# when Redis lost its counters), or false when the lease is not this engine's.
FENCE_SCRIPT_ADOPT = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
local token = tonumber(redis.call('GET', KEYS[2]) or '0')
if token <= tonumber(ARGV[2]) then
  token = tonumber(ARGV[2]) + 1
  redis.call('SET', KEYS[2], token)
end
return token
"""

# Drop the leases named (KEYS[2:]) that this engine holds, and each from its set (KEYS[1]).
LEASE_SCRIPT_RELEASE = """
local released = 0
for i = 2, #KEYS do
  local key = KEYS[i]
  redis.call('SREM', KEYS[1], key)
  if redis.call('GET', key) == ARGV[1] then
    redis.call('DEL', key)
    released = released + 1
  end
end
return released
"""


def _prefix(key_prefix: str | None) -> str:
    return key_prefix if key_prefix is not None else copy_control.prefix()


def lease_key(target: str, key_prefix: str | None = None) -> str:
    """The Redis key of a target's lease."""
    return f"{_prefix(key_prefix)}copy:lease:{target.lower()}"


def fence_key(target: str, key_prefix: str | None = None) -> str:
    """The Redis key of a target lease's fencing token (incremented at every take-over)."""
    return f"{_prefix(key_prefix)}copy:fence:{target.lower()}"


def held_key(name: str, key_prefix: str | None = None) -> str:
    """The Redis set of the lease keys an engine holds (what its renewal extends)."""
    return f"{_prefix(key_prefix)}copy:held:{name}"


def engine_key(name: str, key_prefix: str | None = None) -> str:
    """The Redis hash of a copy engine's heartbeat."""
    return f"{_prefix(key_prefix)}copy:engine:{name}"


def engines_key(key_prefix: str | None = None) -> str:
    """The set of copy engine names of this deployment."""
    return f"{_prefix(key_prefix)}copy:engines"


def owner_of_target(target: str) -> str | None:
    """The engine (worker) name holding the target's lease, or None."""
    raw = copy_control.connection().get(lease_key(target))
    return raw.decode() if raw else None


def engine_heartbeat(name: str) -> str | None:
    """When the engine last heartbeated (ISO time), None when it is gone."""
    raw = copy_control.connection().hget(engine_key(name), "heartbeat_at")
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


# Hand the lease to ARGV[1] for what remains of it (a take-over: the fencing token moves
# on); remember the holder so it stays away, and index the target (score: when the mark
# ends, ms) so that engines need not look for marks among every target; marks already
# over leave the index.
MOVE_SCRIPT = """
local holder = redis.call('GET', KEYS[1])
if not holder or holder == ARGV[1] then return false end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 1000 then ttl = 1000 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('INCR', KEYS[4])
redis.call('SET', KEYS[2], holder, 'PX', ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[3] + ARGV[2], ARGV[4])
return holder
"""


def moved_key(target: str, prefix: str) -> str:
    """The key naming the engine an operator moved ``target`` away from."""
    return f"{prefix}copy:moved:{target.lower()}"


def moved_index_key(prefix: str) -> str:
    """The sorted set of recently moved targets (score: when their mark ends, epoch ms)."""
    return f"{prefix}copy:moved"


def move_target(client: redis.Redis, prefix: str, target: str, to_engine: str,
                hold_off_ms: int) -> str | None:
    """Hand ``target``'s lease from its holder to engine ``to_engine``; the old holder."""
    holder = client.register_script(MOVE_SCRIPT)(
        keys=[lease_key(target, prefix), moved_key(target, prefix), moved_index_key(prefix),
              fence_key(target, prefix)],
        args=[to_engine, hold_off_ms, int(time.time() * 1000), target.lower()])
    if holder:
        announce(client, prefix)
    return holder.decode() if holder else None


def announce(client: redis.Redis, prefix: str) -> None:
    """Tell every engine to sweep now (targets were released or moved)."""
    client.publish(copy_control.channel(prefix), json.dumps({"op": "rebalance"}))


class TargetLeases:
    """This engine's view of the target leases."""

    def __init__(self, client: redis.Redis, prefix: str, owner: str, ttl_ms: int) -> None:
        self.client = client
        self.prefix = prefix
        self.owner = owner
        self.ttl_ms = ttl_ms
        self._renew = client.register_script(LEASE_SCRIPT_RENEW)
        self._renew_held = client.register_script(LEASE_SCRIPT_RENEW_HELD)
        self._held = held_key(owner, prefix)
        self._lease_prefix = lease_key("", prefix)
        self._release = client.register_script(LEASE_SCRIPT_RELEASE)
        self._claim = client.register_script(LEASE_SCRIPT_CLAIM)
        self._adopt = client.register_script(FENCE_SCRIPT_ADOPT)

    def key(self, target: str) -> str:
        """The lease key of ``target``."""
        return lease_key(target, self.prefix)

    def holders(self, targets: Sequence[str]) -> dict[str, str | None]:
        """Who holds each target's lease now (None: nobody)."""
        if not targets:
            return {}
        values = self.client.mget([self.key(t) for t in targets])
        return {t: (v.decode() if v else None) for t, v in zip(targets, values, strict=True)}

    def claim(self, targets: Sequence[str]) -> dict[str, int]:
        """Try to take each free target; the ones now held by this engine, with their new
        fencing tokens."""
        taken: dict[str, int] = {}
        for start in range(0, len(targets), 500):  # a script call blocks Redis: in chunks
            chunk = targets[start:start + 500]
            keys = [self._held] + [key for t in chunk
                                   for key in (self.key(t), fence_key(t, self.prefix))]
            found = self._claim(keys=keys, args=[self.owner, self.ttl_ms])
            taken.update((chunk[int(found[i]) - 1], int(found[i + 1]))
                         for i in range(0, len(found), 2))
        return taken

    def adopt(self, target: str, floor: int = 0) -> int | None:
        """The fencing token of ``target``'s lease if this engine holds it (moved past
        ``floor``, the database's token, when Redis is behind); None when it does not."""
        token = self._adopt(keys=[self.key(target), fence_key(target, self.prefix)],
                            args=[self.owner, floor])
        return int(token) if token else None

    def moved_from(self, targets: Sequence[str]) -> dict[str, str]:
        """Targets an operator moved recently, with the engine they were moved away from.

        Read from the index of moved targets (a few), not by asking for a mark of each
        target: at 10,000 targets, that was a 10,000-key read every sweep of every engine.
        """
        if not targets:
            return {}
        indexed = self.client.zrangebyscore(moved_index_key(self.prefix),
                                            int(time.time() * 1000), "+inf")
        wanted = set(targets)
        moved = [t for t in (name.decode() for name in indexed) if t in wanted]
        if not moved:
            return {}
        values = self.client.mget([moved_key(t, self.prefix) for t in moved])
        return {t: v.decode() for t, v in zip(moved, values, strict=True) if v}

    def renew(self, targets: Sequence[str], exactly: bool = False) -> set[str]:
        """Extend this engine's leases of ``targets``; the targets still held (the rest
        were lost). ``exactly``: these are every lease the engine runs (its set of held
        leases becomes the kept ones)."""
        if not targets and not exactly:
            return set()
        # The script answers the lost ones (nearly always none).
        lost = self._renew(keys=[self._held] + [self.key(t) for t in targets],
                           args=[self.owner, self.ttl_ms, "1" if exactly else "0"])
        return set(targets).difference(targets[int(i) - 1] for i in lost)

    def renew_held(self, running: int) -> list[str] | None:
        """Extend every lease in this engine's set of held ones, in one short command; the
        targets lost (lower case), or None when the set does not hold ``running`` leases
        (then nothing was renewed: renew the running ones by name, ``exactly``)."""
        lost = self._renew_held(keys=[self._held], args=[self.owner, self.ttl_ms, running])
        if lost is None:
            return None
        cut = len(self._lease_prefix)
        return [key.decode()[cut:] for key in lost]

    def release(self, targets: Sequence[str]) -> int:
        """Give up leases this engine holds (graceful stop or rebalancing)."""
        if not targets:
            return 0
        return int(self._release(keys=[self._held] + [self.key(t) for t in targets],
                                 args=[self.owner]))

    def heartbeat(self, fields: dict[str, str]) -> None:
        """Announce this engine alive for one lease period."""
        key = engine_key(self.owner, self.prefix)
        with self.client.pipeline() as pipe:
            pipe.hset(key, mapping=fields)
            pipe.pexpire(key, self.ttl_ms)
            pipe.sadd(engines_key(self.prefix), self.owner)
            pipe.execute()

    def unregister(self) -> None:
        """Leave the engine set at once (so others rebalance without waiting for expiry)."""
        with self.client.pipeline() as pipe:
            pipe.delete(engine_key(self.owner, self.prefix))
            pipe.delete(self._held)
            pipe.srem(engines_key(self.prefix), self.owner)
            pipe.execute()

    def live_engines(self) -> list[str]:
        """Engines heartbeating now."""
        return live_engines(self.client, self.prefix)
