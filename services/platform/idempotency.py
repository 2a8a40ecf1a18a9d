"""Run a keyed write once: the core behind the Idempotency-Key header and MCP ``idempotency_key``.

Records live in the database (``idempotency_records``), not Redis, so a cache
restart cannot make a retried order run twice. The unique (user, key) row is the
lock: the request that inserts it runs the action; a duplicate arriving while it
runs gets Conflict (409, Retry-After); one arriving after gets the saved first
response (``replayed``). The same key with a different request is refused. A
5xx outcome or an exception releases the key so the client can retry. When the
store cannot be reached the write is refused (CacheUnavailable, 503), never run
unprotected. Records are kept 24 hours.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import peewee

from models import IdempotencyRecord
from models.base import db, utcnow
from services.platform import errors, metrics

log = logging.getLogger(__name__)

KEY_TTL = timedelta(hours=24)
# A running record older than this is presumed orphaned (its process died) and
# may be taken over; it must exceed the slowest legitimate write.
LOCK_TTL = timedelta(minutes=5)
HEADER = "Idempotency-Key"


@dataclass(frozen=True)
class Outcome:
    """What a keyed write answered: status, JSON body, and whether it is a replay."""

    status: int
    body: Any
    replayed: bool


def parse_key(raw: Any, *, field: str = HEADER) -> UUID:
    """The key as a UUID; ValidationFailed (400) naming ``field`` when it is not one."""
    try:
        if not isinstance(raw, str | UUID):
            raise ValueError(raw)
        return raw if isinstance(raw, UUID) else UUID(raw.strip())
    except ValueError:
        raise errors.ValidationFailed(f"Validation failed: {field} must be a UUID.",
                                      fields={field: ["Must be a UUID."]}) from None


def fingerprint(*parts: Any) -> str:
    """A stable digest of what a request asks for (route, arguments, body)."""
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


@contextmanager
def _store() -> Iterator[None]:
    """Translate store failures into CacheUnavailable: keyed writes fail closed."""
    try:
        yield
    except peewee.IntegrityError:
        raise
    except (peewee.DatabaseError, peewee.InterfaceError) as exc:
        log.warning("idempotency store unavailable: %s", type(exc).__name__)
        raise errors.CacheUnavailable(
            "The idempotency store is unavailable; the request was not run.") from exc


def _claim(user_id: UUID, key: UUID, digest: str, now: datetime,
           lock_ttl: timedelta) -> tuple[UUID | None, IdempotencyRecord | None]:
    """Take the lock (lock token, None) or report the existing record (None, record)."""
    for _ in range(3):
        token = uuid.uuid4()
        try:
            with _store(), db.atomic():
                IdempotencyRecord.create(user=user_id, key=key, fingerprint=digest,
                                         lock_token=token, locked_until=now + lock_ttl,
                                         created_at=now, expires_at=now + KEY_TTL)
            return token, None
        except peewee.IntegrityError:
            pass
        with _store():
            record = IdempotencyRecord.get_or_none(IdempotencyRecord.user == user_id,
                                                   IdempotencyRecord.key == key)
            if record is None:
                continue  # released meanwhile: try again
            if record.expires_at <= now:
                (IdempotencyRecord.delete()
                 .where(IdempotencyRecord.id == record.id,
                        IdempotencyRecord.expires_at <= now).execute())
                continue
            if record.fingerprint != digest or record.status_code is not None:
                return None, record
            if record.locked_until <= now:
                # Its owner died mid-run: take the lock over, once.
                taken = (IdempotencyRecord.update(lock_token=token,
                                                  locked_until=now + lock_ttl)
                         .where(IdempotencyRecord.id == record.id,
                                IdempotencyRecord.lock_token == record.lock_token,
                                IdempotencyRecord.status_code.is_null()).execute())
                if taken:
                    log.warning("idempotency key %s: taking over an orphaned run", key)
                    return token, None
            return None, record
    raise errors.Conflict()


def _release(record_key: tuple[UUID, UUID], token: UUID) -> None:
    user_id, key = record_key
    try:
        with _store():
            (IdempotencyRecord.delete()
             .where(IdempotencyRecord.user == user_id, IdempotencyRecord.key == key,
                    IdempotencyRecord.lock_token == token,
                    IdempotencyRecord.status_code.is_null()).execute())
    except errors.CacheUnavailable:
        # The lock then lapses after LOCK_TTL; nothing ran twice.
        log.warning("idempotency key %s could not be released", key)


def run_once(user_id: UUID, key: UUID | str, request_fingerprint: str,
             action: Callable[[], tuple[int, Any]], *, lock_ttl: timedelta = LOCK_TTL,
             now: datetime | None = None) -> Outcome:
    """Run ``action`` (returning status, JSON body) once per (user, key) within 24 hours."""
    key = parse_key(key)
    now = now or utcnow()
    token, existing = _claim(user_id, key, request_fingerprint, now, lock_ttl)
    if existing is not None:
        if existing.fingerprint != request_fingerprint:
            metrics.idempotency_conflict("mismatch")
            raise errors.BadRequest(
                "This Idempotency-Key was already used for a different request (another "
                "route, arguments or body); use a new key for a new request.")
        if existing.status_code is None:
            metrics.idempotency_conflict("in_flight")
            raise errors.Conflict("A request with this Idempotency-Key is still running; "
                                  "retry shortly to get its result.")
        body = json.loads(existing.body) if existing.body is not None else None
        metrics.idempotency_replayed()
        return Outcome(status=existing.status_code, body=body, replayed=True)

    assert token is not None
    try:
        status, body = action()
    except BaseException:
        _release((user_id, key), token)
        raise
    if status >= 500:
        # A server-side failure is not a final answer: let the client retry.
        _release((user_id, key), token)
        return Outcome(status=status, body=body, replayed=False)
    stored = None if body is None else json.dumps(body, separators=(",", ":"))
    try:
        with _store():
            (IdempotencyRecord.update(status_code=status, body=stored, lock_token=None)
             .where(IdempotencyRecord.user == user_id, IdempotencyRecord.key == key,
                    IdempotencyRecord.lock_token == token).execute())
    except errors.CacheUnavailable:
        # The write happened; the record stays locked until LOCK_TTL, so a retry
        # meanwhile gets 409 rather than a second run.
        log.warning("idempotency key %s: result could not be saved", key)
    return Outcome(status=status, body=body, replayed=False)


def purge_expired(now: datetime | None = None) -> int:
    """Delete records older than the 24-hour retention; return how many."""
    now = now or utcnow()
    with _store():
        return (IdempotencyRecord.delete()
                .where(IdempotencyRecord.expires_at <= now).execute())
