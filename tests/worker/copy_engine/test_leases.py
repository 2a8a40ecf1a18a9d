"""Target leases in Redis (``services.platform.copy_leases``): moves and their marks."""

from __future__ import annotations

import time
from types import SimpleNamespace

import redis
import trio

from services.platform import copy_leases
from services.platform.copy_leases import TargetLeases
from worker.copy_engine.ownership import TargetOwnership


def test_moved_marks_are_found_through_their_index_and_end(redis_url, engine_prefix):
    client = redis.Redis.from_url(redis_url)
    targets = [f"0x{i:040x}" for i in range(2000)]
    old = TargetLeases(client, engine_prefix, "engine-old", 5000)
    assert list(old.claim(targets[:3])) == targets[:3]
    assert copy_leases.move_target(client, engine_prefix, targets[0], "engine-new", 300) \
        == "engine-old"
    assert copy_leases.move_target(client, engine_prefix, targets[1], "engine-new", 60000) \
        == "engine-old"
    assert copy_leases.move_target(client, engine_prefix, targets[5], "engine-new", 60000) \
        is None  # nobody held it: nothing moved, nothing marked
    new = TargetLeases(client, engine_prefix, "engine-new", 5000)
    assert new.holders(targets[:3]) == {targets[0]: "engine-new", targets[1]: "engine-new",
                                        targets[2]: "engine-old"}
    assert new.moved_from(targets) == {targets[0]: "engine-old", targets[1]: "engine-old"}
    assert new.moved_from(targets[1:]) == {targets[1]: "engine-old"}  # only those asked
    time.sleep(0.4)  # the first mark ends
    assert new.moved_from(targets) == {targets[1]: "engine-old"}
    # The next move drops the ended marks from the index.
    copy_leases.move_target(client, engine_prefix, targets[2], "engine-new", 60000)
    index = client.zrange(copy_leases.moved_index_key(engine_prefix), 0, -1)
    assert sorted(name.decode() for name in index) == [targets[1], targets[2]]


def test_an_engine_claims_at_most_its_limit_per_rebalance(redis_url, engine_prefix):
    """The first engine up claims in steps, so that the others find targets left to take."""
    client = redis.Redis.from_url(redis_url)
    active = {f"0x{i:040x}": 1 for i in range(10)}

    async def call(function, *args):
        return function(*args)

    async def main() -> None:
        first = TargetOwnership(client, engine_prefix, "engine-a", 5000, call)
        await first.heartbeat({"heartbeat_at": "now"})
        owned: dict[str, object] = {}
        claimed = await first.rebalance(active, owned, owned.pop, limit=3)
        assert len(claimed) == 3
        owned.update(dict.fromkeys(claimed, SimpleNamespace(configs=[1])))
        assert len(await first.rebalance(active, owned, owned.pop, limit=0)) == 0
        second = TargetOwnership(client, engine_prefix, "engine-b", 5000, call)
        await second.heartbeat({"heartbeat_at": "now"})
        # Two engines: a share of 5 each; the second takes 5 of the 7 left at once.
        assert len(await second.rebalance(active, {}, lambda t: None)) == 5

    trio.run(main)


def test_targets_that_traded_lately_are_claimed_and_started_first(redis_url, engine_prefix):
    """A take-over claims in steps: the dead engine's targets the feed saw trade go alone
    in the first step, so their gap is copied first (issue 31's fast take-over)."""
    client = redis.Redis.from_url(redis_url)
    active = {f"0x{i:040x}": 1 for i in range(10)}
    lately = [f"0x{i:040x}" for i in (9, 4)]

    async def call(function, *args):
        return function(*args)

    async def main() -> None:
        engine = TargetOwnership(client, engine_prefix, "engine-a", 5000, call)
        await engine.heartbeat({"heartbeat_at": "now"})
        def urgent(target: str) -> bool:
            return target in lately

        owned: dict[str, object] = {}
        claimed = await engine.rebalance(active, owned, owned.pop, limit=3, urgent=urgent)
        assert claimed == sorted(lately)  # alone in the first step, however much room
        owned.update(dict.fromkeys(claimed, SimpleNamespace(configs=[1])))
        claimed = await engine.rebalance(active, owned, owned.pop, limit=3, urgent=urgent)
        assert claimed == [f"0x{i:040x}" for i in range(3)]  # then the others, in order

    trio.run(main)


def test_renewal_by_exception_extends_the_held_set_and_names_only_the_lost(
        redis_url, engine_prefix):
    """One short command renews every lease an engine holds; only taken-over ones come back,
    and a set that does not match what the engine runs renews nothing."""
    client = redis.Redis.from_url(redis_url)
    targets = [f"0x{i:040x}" for i in range(5)]
    a = TargetLeases(client, engine_prefix, "engine-a", 5000)
    assert sorted(a.claim(targets)) == targets
    for t in targets:
        client.pexpire(a.key(t), 1000)
    assert a.renew_held(5) == []
    assert all(client.pttl(a.key(t)) > 4000 for t in targets)
    # Taken over (an operator's move) and expired: named once, then out of the set.
    copy_leases.move_target(client, engine_prefix, targets[0], "engine-b", 60000)
    client.delete(a.key(targets[1]))
    assert sorted(a.renew_held(5)) == targets[:2]
    assert client.get(a.key(targets[1])) is None  # an expired lease is not taken back
    assert a.renew_held(3) == []
    # A count that is not the engine's: nothing renewed, the caller renews by name.
    client.pexpire(a.key(targets[2]), 1000)
    assert a.renew_held(4) is None
    assert client.pttl(a.key(targets[2])) <= 1000
    # Released leases leave the set; a renewal by name makes the set exactly the kept.
    a.release([targets[2]])
    assert a.renew_held(2) == []
    assert a.renew(targets[3:4], exactly=True) == {targets[3]}
    client.pexpire(a.key(targets[4]), 1000)
    assert a.renew_held(1) == []
    assert client.pttl(a.key(targets[4])) <= 1000  # no longer in the set: not extended
    assert client.get(a.key(targets[0])) == b"engine-b"  # the other's lease untouched


def test_an_engine_renews_by_name_when_its_held_set_is_off(redis_url, engine_prefix):
    """Redis lost the set, or it holds a lease the engine stopped without releasing: the
    leases the engine runs are renewed by name (lost ones named), the stray one is not."""
    client = redis.Redis.from_url(redis_url)
    targets = [f"0x{i:040x}" for i in range(4)]

    async def call(function, *args):
        return function(*args)

    async def main() -> None:
        own = TargetOwnership(client, engine_prefix, "engine-a", 5000, call)
        assert sorted(own.leases.claim(targets)) == targets
        assert await own.renew(targets) == set()
        # Stopped targets[3] without releasing it, and lost targets[2]'s lease.
        client.delete(own.leases.key(targets[2]))
        client.pexpire(own.leases.key(targets[3]), 1000)
        assert await own.renew(targets[:3]) == {targets[2]}
        assert client.pttl(own.leases.key(targets[3])) <= 1000
        assert own.may_send()
        # Redis lost the set: the running leases are renewed by name and make it again.
        client.delete(copy_leases.held_key("engine-a", engine_prefix))
        client.pexpire(own.leases.key(targets[0]), 1000)
        assert await own.renew(targets[:2]) == set()
        assert client.pttl(own.leases.key(targets[0])) > 4000
        assert own.leases.renew_held(2) == []

    trio.run(main)
