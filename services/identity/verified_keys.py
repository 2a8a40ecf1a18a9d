"""Verified API keys kept in this process for a few seconds, checked against the credential
generation on every use.

Resolving a key costs its HMAC, a query and peewee building the key's and the user's rows
on every request (the largest part of a keyed GET's access gate, docs/capacity.md). An entry
here holds what that gave (the key's id, scopes, expiry and last use, the user's row) and is
used only when both hold:

- the credential generation this request read (in the rate limiter's round trip, before any
  database read) is the one read before the entry's rows were: anything that revokes a key
  or changes an account moves it after its commit (services/platform/credential_generation.py),
  so a change acts on every process's next request;
- the entry is younger than ``API_KEY_CACHE_SECONDS`` (at most 10): the bound when the
  generation could not be moved (Redis unreachable at the change) or a row was changed
  behind the services' back.

Without a generation (Redis down, or no rate limiter) nothing is read from or put here: the
key is read from the database on every request. Keys are the tokens' SHA-256, never the
tokens; a refused token is never kept. Each use gets its own copy of the user's row.
"""

from __future__ import annotations

import hashlib
import threading
import time
from datetime import datetime
from typing import Any
from uuid import UUID

from models import User

MAX_ENTRIES = 10_000  # beyond it the cache starts again empty (a flood of distinct keys)


class Entry:
    """What one key's verification gave, as of one credential generation."""

    __slots__ = (
        "expires_at",
        "fresh_until",
        "generation",
        "key_id",
        "last_used_at",
        "scopes",
        "user_data",
    )

    def __init__(self, key_id: UUID, scopes: frozenset[str], expires_at: datetime | None,
                 last_used_at: datetime | None, user: User, generation: Any,
                 fresh_until: float) -> None:
        self.key_id = key_id
        self.scopes = scopes
        self.expires_at = expires_at
        self.last_used_at = last_used_at
        self.user_data = dict(user.__data__)
        self.generation = generation
        self.fresh_until = fresh_until

    def user(self) -> User:
        """A fresh copy of the user's row as it was read (a view may change its own)."""
        copy = User.__new__(User)
        copy.__data__ = dict(self.user_data)
        copy._dirty = set()
        copy.__rel__ = {}
        return copy


_entries: dict[bytes, Entry] = {}
_lock = threading.Lock()


def digest(token: str) -> bytes:
    """What an entry is kept under: the token's SHA-256, never the token."""
    return hashlib.sha256(token.encode()).digest()


def get(token_digest: bytes, generation: Any) -> Entry | None:
    """The entry for a token if it was verified under ``generation`` and is still young."""
    entry = _entries.get(token_digest)
    if entry is None or entry.generation != generation or time.monotonic() >= entry.fresh_until:
        return None
    return entry


def put(token_digest: bytes, entry: Entry) -> None:
    """Keep a verified key's entry (replacing any older one)."""
    with _lock:
        if len(_entries) >= MAX_ENTRIES:
            _entries.clear()
        _entries[token_digest] = entry


def clear() -> None:
    """Forget every entry of this process."""
    with _lock:
        _entries.clear()
