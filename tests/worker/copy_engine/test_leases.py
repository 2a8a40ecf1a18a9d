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
