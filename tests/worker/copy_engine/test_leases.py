"""Target leases in Redis (``services.copy_leases``): moves and their marks."""

from __future__ import annotations

import time

import redis

from services import copy_leases
from services.copy_leases import TargetLeases


def test_moved_marks_are_found_through_their_index_and_end(redis_url, engine_prefix):
    client = redis.Redis.from_url(redis_url)
    targets = [f"0x{i:040x}" for i in range(2000)]
    old = TargetLeases(client, engine_prefix, "engine-old", 5000)
    assert old.claim(targets[:3]) == targets[:3]
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
