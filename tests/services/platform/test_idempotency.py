"""services.platform.idempotency.run_once, as MCP tools call it: replay, takeover, store
unreachable."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from playhouse.pool import PooledPostgresqlDatabase

from models import IdempotencyRecord
from models.base import utcnow
from services.platform import errors, idempotency
from tests.conftest import free_port


def test_run_once_replays_the_first_outcome(user):
    calls = []

    def action():
        calls.append(1)
        return 200, {"result": len(calls)}

    key = uuid.uuid4()
    digest = idempotency.fingerprint("tool", "place_market_order", {"size": "5"})
    first = idempotency.run_once(user.id, key, digest, action)
    second = idempotency.run_once(user.id, str(key), digest, action)
    assert first == idempotency.Outcome(200, {"result": 1}, replayed=False)
    assert second == idempotency.Outcome(200, {"result": 1}, replayed=True)
    with pytest.raises(errors.BadRequest):
        idempotency.run_once(user.id, key, idempotency.fingerprint("other"), action)
    with pytest.raises(errors.ValidationFailed):
        idempotency.run_once(user.id, "nope", digest, action)
    assert calls == [1]


def test_exceptions_release_the_key(user):
    key = uuid.uuid4()

    def boom():
        raise errors.VenueUnavailable()

    with pytest.raises(errors.VenueUnavailable):
        idempotency.run_once(user.id, key, "d", boom)
    assert idempotency.run_once(user.id, key, "d", lambda: (200, {"ok": True})).replayed is False


def test_running_duplicate_conflicts_then_orphan_is_taken_over(user):
    key = uuid.uuid4()
    now = utcnow()
    IdempotencyRecord.create(user=user.id, key=key, fingerprint="d", lock_token=uuid.uuid4(),
                             locked_until=now + timedelta(minutes=5), created_at=now,
                             expires_at=now + timedelta(hours=24))
    with pytest.raises(errors.Conflict):
        idempotency.run_once(user.id, key, "d", lambda: (200, {}))
    later = now + timedelta(minutes=6)
    outcome = idempotency.run_once(user.id, key, "d", lambda: (201, {"ran": True}), now=later)
    assert outcome == idempotency.Outcome(201, {"ran": True}, replayed=False)


def test_unreachable_store_fails_closed(user):
    dead = PooledPostgresqlDatabase("nowhere", host="127.0.0.1", port=free_port(),
                                    user="postgres", timeout=1)
    ran = []
    with dead.bind_ctx([IdempotencyRecord]), pytest.raises(errors.CacheUnavailable):
        idempotency.run_once(user.id, uuid.uuid4(), "d", lambda: ran.append(1) or (200, {}))
    assert ran == []
    assert idempotency.purge_expired() == 0
