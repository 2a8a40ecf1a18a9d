"""MetadataCache: TTL expiry, LRU bound, and concurrent use from threads."""

from __future__ import annotations

import threading
from decimal import Decimal

from venue.cache import MetadataCache


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_values_expire_after_ttl() -> None:
    clock = Clock()
    cache = MetadataCache(clock=clock)
    cache.set("clob:tick:1", Decimal("0.01"), ttl=30)
    clock.now += 29.9
    assert cache.get("clob:tick:1") == Decimal("0.01")
    clock.now += 0.2
    assert cache.get("clob:tick:1", "gone") == "gone"
    assert len(cache) == 0


def test_none_is_a_cacheable_value_distinct_from_missing() -> None:
    cache = MetadataCache()
    marker = object()
    cache.set("fee:1", None, ttl=10)
    assert cache.get("fee:1", marker) is None
    assert cache.get("fee:2", marker) is marker


def test_lru_bound_and_invalidate() -> None:
    cache = MetadataCache(max_entries=2)
    cache.set("a", 1, 10)
    cache.set("b", 2, 10)
    cache.get("a")  # a is now most recent
    cache.set("c", 3, 10)
    assert cache.contains("a") and cache.contains("c") and not cache.contains("b")
    cache.invalidate("a")
    assert not cache.contains("a") and len(cache) == 1
    cache.invalidate()
    assert len(cache) == 0


def test_threads_share_it_safely() -> None:
    cache = MetadataCache(max_entries=64)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(2000):
                key = f"k{(n * i) % 100}"
                cache.set(key, i, 5)
                cache.get(key)
        except BaseException as exc:  # pragma: no cover - only on a real race
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(cache) <= 64
    assert cache.hits > 0
