"""A small thread-safe TTL cache for venue metadata (markets, tick sizes, neg-risk, fees).

A busy dashboard page or a copy burst asks for the same market many times a second; the
answers change rarely, so a short TTL turns hundreds of venue calls into one.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

_MISSING = object()


class MetadataCache:
    """Bounded LRU of key -> (expiry, value); safe to share between threads and tasks."""

    def __init__(
        self,
        max_entries: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._entries: OrderedDict[str, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_entries
        self._clock = clock
        self.hits = 0
        self.misses = 0

    def get(self, key: str, default: Any = None) -> Any:
        """The live value under ``key``, or ``default`` if absent or expired."""
        now = self._clock()
        with self._lock:
            entry = self._entries.get(key, _MISSING)
            if entry is _MISSING or entry[0] <= now:  # type: ignore[index]
                if entry is not _MISSING:
                    del self._entries[key]
                self.misses += 1
                return default
            self._entries.move_to_end(key)
            self.hits += 1
            return entry[1]  # type: ignore[index]

    def contains(self, key: str) -> bool:
        """True when ``key`` holds a live value (does not count as a hit)."""
        with self._lock:
            entry = self._entries.get(key)
            return entry is not None and entry[0] > self._clock()

    def set(self, key: str, value: Any, ttl: float) -> None:
        """Store ``value`` for ``ttl`` seconds, evicting the least recently used if full."""
        with self._lock:
            self._entries[key] = (self._clock() + ttl, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)

    def invalidate(self, prefix: str = "") -> None:
        """Drop every key starting with ``prefix`` (all keys when empty)."""
        with self._lock:
            for key in [k for k in self._entries if k.startswith(prefix)]:
                del self._entries[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
