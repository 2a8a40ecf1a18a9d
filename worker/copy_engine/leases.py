"""Target leases in Redis (blocking calls; the engine runs them in threads).

A lease is ``SET <prefix>copy:lease:<target> <engine> NX PX <ttl>``; renewals and
releases run as Lua scripts that only touch keys still holding this engine's name, so
an engine can never renew or drop a lease another engine took over.

An operator moves a target (``copytrade executors move``) with ``move_target``: the lease
is handed to another live engine (same remaining TTL) and ``<prefix>copy:moved:<target>``
names the engine it was taken from for a while. That engine sees another holder at its
next renewal and drops the target; the new holder adopts it at its next sweep (nudged at
once); while the mark lasts the old engine does not claim it back and the new one does
not shed it to keep its fair share.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import redis

from services import copy_control

# Hand the lease to ARGV[1] for what remains of it; remember the holder so it stays away.
MOVE_SCRIPT = """
local holder = redis.call('GET', KEYS[1])
if not holder or holder == ARGV[1] then return false end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 1000 then ttl = 1000 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('SET', KEYS[2], holder, 'PX', ARGV[2])
return holder
"""


def moved_key(target: str, prefix: str) -> str:
    """The key naming the engine an operator moved ``target`` away from."""
    return f"{prefix}copy:moved:{target.lower()}"


def move_target(client: redis.Redis, prefix: str, target: str, to_engine: str,
                hold_off_ms: int) -> str | None:
    """Hand ``target``'s lease from its holder to engine ``to_engine``; the old holder."""
    holder = client.register_script(MOVE_SCRIPT)(
        keys=[copy_control.lease_key(target, prefix), moved_key(target, prefix)],
        args=[to_engine, hold_off_ms])
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
        self._renew = client.register_script(copy_control.LEASE_SCRIPT_RENEW)
        self._release = client.register_script(copy_control.LEASE_SCRIPT_RELEASE)

    def key(self, target: str) -> str:
        """The lease key of ``target``."""
        return copy_control.lease_key(target, self.prefix)

    def holders(self, targets: Sequence[str]) -> dict[str, str | None]:
        """Who holds each target's lease now (None: nobody)."""
        if not targets:
            return {}
        values = self.client.mget([self.key(t) for t in targets])
        return {t: (v.decode() if v else None) for t, v in zip(targets, values, strict=True)}

    def claim(self, targets: Sequence[str]) -> list[str]:
        """Try to take each free target; the ones now held by this engine."""
        if not targets:
            return []
        with self.client.pipeline(transaction=False) as pipe:
            for target in targets:
                pipe.set(self.key(target), self.owner, nx=True, px=self.ttl_ms)
            results = pipe.execute()
        return [t for t, ok in zip(targets, results, strict=True) if ok]

    def moved_from(self, targets: Sequence[str]) -> dict[str, str]:
        """Targets an operator moved recently, with the engine they were moved away from."""
        if not targets:
            return {}
        values = self.client.mget([moved_key(t, self.prefix) for t in targets])
        return {t: v.decode() for t, v in zip(targets, values, strict=True) if v}

    def renew(self, targets: Sequence[str]) -> set[str]:
        """Extend this engine's leases; the targets still held (the rest were lost)."""
        if not targets:
            return set()
        renewed = self._renew(keys=[self.key(t) for t in targets],
                              args=[self.owner, self.ttl_ms])
        return {targets[int(i) - 1] for i in renewed}

    def release(self, targets: Sequence[str]) -> int:
        """Give up leases this engine holds (graceful stop or rebalancing)."""
        if not targets:
            return 0
        return int(self._release(keys=[self.key(t) for t in targets], args=[self.owner]))

    def heartbeat(self, fields: dict[str, str]) -> None:
        """Announce this engine alive for one lease period."""
        key = copy_control.engine_key(self.owner, self.prefix)
        with self.client.pipeline() as pipe:
            pipe.hset(key, mapping=fields)
            pipe.pexpire(key, self.ttl_ms)
            pipe.sadd(copy_control.engines_key(self.prefix), self.owner)
            pipe.execute()

    def unregister(self) -> None:
        """Leave the engine set at once (so others rebalance without waiting for expiry)."""
        with self.client.pipeline() as pipe:
            pipe.delete(copy_control.engine_key(self.owner, self.prefix))
            pipe.srem(copy_control.engines_key(self.prefix), self.owner)
            pipe.execute()

    def live_engines(self) -> list[str]:
        """Engines heartbeating now."""
        return copy_control.live_engines(self.client, self.prefix)
