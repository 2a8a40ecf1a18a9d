"""Verified API keys cached per process: a revocation or an account change acts on another
process's next request (the credential generation, read in the rate limiter's round trip);
with Redis down every request reads the key; a change Redis missed acts within the bound."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from app import create_app
from models import ApiKey, User
from models.base import db, utcnow
from services.identity import keys, users
from services.platform import credential_generation, errors
from tests.conftest import DEADLINE, free_port

ROOT = Path(__file__).resolve().parents[2]

# Another web process on the same database and Redis: one line in (a token), its answer's
# status and tier out.
OTHER_PROCESS = """
import json, sys
from app import create_app
client = create_app(json.loads(sys.argv[1])).test_client()
print("ready", flush=True)
for line in sys.stdin:
    answer = client.get("/api/users/me", headers={"Authorization": "Bearer " + line.strip()})
    body = answer.get_json() or {}
    print(answer.status_code, body.get("tier"), flush=True)
"""


class OtherProcess:
    """A second process serving the app, asked one request at a time."""

    def __init__(self, config: dict) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen(
            [sys.executable, "-c", OTHER_PROCESS, json.dumps(config)], cwd=ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self._line() == "ready"

    def _line(self) -> str:
        deadline = time.monotonic() + DEADLINE
        line = self.process.stdout.readline()  # type: ignore[union-attr]
        assert line and time.monotonic() < deadline, "the other process ended"
        return line.strip()

    def get_me(self, token: str) -> tuple[int, str]:
        """Its answer to GET /api/users/me with ``token``: (status, tier)."""
        self.process.stdin.write(token + "\n")  # type: ignore[union-attr]
        self.process.stdin.flush()  # type: ignore[union-attr]
        status, tier = self._line().split(" ", 1)
        return int(status), tier

    def stop(self) -> None:
        """End it."""
        self.process.stdin.close()  # type: ignore[union-attr]
        self.process.wait(timeout=DEADLINE)


@pytest.fixture
def other_process(app_config, app):
    started = []

    def start() -> OtherProcess:
        started.append(OtherProcess(app_config))
        return started[-1]

    yield start
    for process in started:
        process.stop()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_revocation_acts_on_the_other_process_next_request(client, auth_headers, api_key,
                                                             other_process):
    secret = api_key("read:account")
    key = ApiKey.get()
    other = other_process()
    assert other.get_me(secret)[0] == 200  # verified there, and kept
    # The row changed behind the services' back (no generation moved): the other process
    # still uses what it verified, which shows it does keep it ...
    ApiKey.update(revoked_at=utcnow()).where(ApiKey.id == key.id).execute()
    assert other.get_me(secret)[0] == 200
    # ... and a revocation through the API moves the generation: refused at once there.
    assert client.delete(f"/api/keys/{key.id}", headers=auth_headers).status_code == 204
    assert other.get_me(secret)[0] == 401


def test_disabling_the_account_or_moving_its_tier_acts_on_the_other_process(
        user, api_key, other_process):
    secret = api_key("read:account")
    other = other_process()
    assert other.get_me(secret) == (200, user.tier)
    users.set_tier(user.email, "pro")  # as `copytrade users set-tier` does
    assert other.get_me(secret) == (200, "pro")
    users.disable(user.email)
    assert other.get_me(secret)[0] == 401
    users.enable(user.email)
    assert other.get_me(secret) == (200, "pro")


def test_a_change_redis_missed_acts_within_the_bound(client, auth_headers, api_key,
                                                     set_settings, monkeypatch):
    bound = set_settings(api_key_cache_seconds=1.0).api_key_cache_seconds
    secret = api_key("read:account")
    key = ApiKey.get()
    assert client.get("/api/users/me", headers=bearer(secret)).status_code == 200
    # The entry was put during that request, so it is fresh until at most now + bound: a request
    # that starts later must be refused (one started before may answer after, under load).
    fresh_until = time.monotonic() + bound

    def unreachable(*args, **kwargs):
        raise redis.exceptions.ConnectionError("Redis went away")

    monkeypatch.setattr(redis.Redis, "incr", unreachable)  # the revocation's bump is lost
    assert client.delete(f"/api/keys/{key.id}", headers=auth_headers).status_code == 204
    monkeypatch.undo()
    while True:
        started = time.monotonic()
        answer = client.get("/api/users/me", headers=bearer(secret))
        if answer.status_code != 200:
            break
        assert started < fresh_until, "a revoked key served past the bound"
        time.sleep(0.05)
    assert answer.status_code == 401
    assert answer.get_json()["code"] == "invalid_token"


def test_with_redis_down_every_request_reads_the_key(app_config, app, api_key):
    down = create_app({**app_config, "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"})
    try:
        client = down.test_client()
        secret = api_key("read:account")
        assert client.get("/api/users/me", headers=bearer(secret)).status_code == 200
        # Changed behind the services' back, with no generation to move: read at once.
        ApiKey.update(revoked_at=utcnow()).where(ApiKey.user == User.get().id).execute()
        answer = client.get("/api/users/me", headers=bearer(secret))
        assert answer.status_code == 401 and answer.get_json()["code"] == "invalid_token"
    finally:
        database = down.extensions["database"]
        if hasattr(database, "close_all"):
            database.close_all()
        db.initialize(app.extensions["database"])


def test_each_use_gets_its_own_copy_of_the_account(app, user, api_key):
    secret = api_key("read:account")
    with app.app_context(), db.connection_context():
        first = keys.resolve(secret, b"generation-1")
        first.user.tier = "changed by a view"
        second = keys.resolve(secret, b"generation-1")
        assert second.user.tier == user.tier
        assert second.user is not first.user and not second.user.is_dirty()
        # A generation other than the one it was verified under reads the key again.
        ApiKey.update(revoked_at=utcnow()).where(ApiKey.user == user.id).execute()
        assert keys.resolve(secret, b"generation-1").credential_id == first.credential_id
        with pytest.raises(errors.InvalidToken):
            keys.resolve(secret, b"generation-2")
    assert credential_generation.KEY_SUFFIX in credential_generation.key("p:")


def test_a_key_of_a_disabled_account_is_not_kept(client, user, api_key):
    # Refused for its account, then the account enabled behind the services' back (no
    # generation moved): nothing was kept, so the next request reads the account again.
    secret = api_key("read:account")
    User.update(disabled_at=utcnow()).where(User.id == user.id).execute()
    assert client.get("/api/users/me", headers=bearer(secret)).status_code == 401
    User.update(disabled_at=None).where(User.id == user.id).execute()
    assert client.get("/api/users/me", headers=bearer(secret)).status_code == 200
