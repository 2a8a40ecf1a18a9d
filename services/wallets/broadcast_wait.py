"""The short wait of a withdraw or claim request for its broadcast, cheap and bounded.

A request waits at most WITHDRAW_WAIT_SECONDS for the job to broadcast, so the answer can
carry the hash. Waiting parks a web thread, so at most WITHDRAW_MAX_WAITERS requests of a
process wait at once; the others answer ``queued`` at once with their status URL (the same
shape). The record is re-read with a backoff (50 ms doubling to 500 ms), not every 50 ms.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from models.wallet import BROADCAST, QUEUED, SIGNED
from services.platform import chain_access

T = TypeVar("T")

FIRST_POLL_SECONDS = 0.05
MAX_POLL_SECONDS = 0.5

_lock = threading.Lock()
_waiting = 0


def waiting() -> int:
    """How many requests of this process are waiting now."""
    return _waiting


@contextmanager
def _slot(limit: int) -> Iterator[bool]:
    """Take one of ``limit`` waiting slots if one is free; yields whether it was."""
    global _waiting
    with _lock:
        granted = _waiting < limit
        if granted:
            _waiting += 1
    try:
        yield granted
    finally:
        if granted:
            with _lock:
                _waiting -= 1


def tx_hash(record: Any) -> str | None:
    """The hash of a withdrawal's or claim's transaction once known: its on-chain
    transaction's, or the one the relayer ran its batch in."""
    if record.transaction_id is not None:
        return str(record.transaction.tx_hash)
    return record.relayer_transaction_hash


def hash_known(record: Any) -> bool:
    """Whether a request waiting on ``record`` can answer: the hash is known, or the record
    ended (or became ambiguous). A relayer batch has its hash once it ran, not at submit."""
    if record.status in (QUEUED, SIGNED):
        return False
    return not (record.status == BROADCAST and record.relayer_transaction_id is not None)


def wait_until(read: Callable[[], T], settled: Callable[[T], bool], timeout: float) -> T:
    """``read()`` once ``settled`` holds, or its last value after ``timeout`` seconds.

    Answers at once (the first read) when every waiting slot of the process is taken.
    """
    value = read()
    if settled(value) or timeout <= 0:
        return value
    with _slot(chain_access.current().withdraw_max_waiters) as granted:
        if not granted:
            return value
        deadline = time.monotonic() + timeout
        delay = FIRST_POLL_SECONDS
        while (remaining := deadline - time.monotonic()) > 0:
            time.sleep(min(delay, remaining))
            value = read()
            if settled(value):
                return value
            delay = min(delay * 2, MAX_POLL_SECONDS)
        return value
