"""Idempotency-Key on REST writes: replay, mismatch, concurrency on a real server, store down."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.idempotency import idempotent
from models import IdempotencyRecord, User
from services.identity import auth
from services.platform import errors
from tests.conftest import DEADLINE
from tests.http_helpers import serving

writes = Blueprint("idempotency_test", __name__, url_prefix="/api/_idem", description="test")
runs: dict[str, int] = {}
runs_lock = threading.Lock()
# A request with "hold" keeps running until the test sets this (see the parallel test).
released = threading.Event()


def _count(tag: str) -> int:
    with runs_lock:
        runs[tag] = runs.get(tag, 0) + 1
        return runs[tag]


@writes.route("/orders")
class Orders(MethodView):
    @access.requires("trade:execute")
    @idempotent
    @writes.response(201)
    def post(self):
        from flask import request

        body = request.get_json()
        if body.get("hold"):
            released.wait(DEADLINE)
        if body.get("fail_first") and runs.get(body["tag"], 0) == 0:
            _count(body["tag"])
            raise errors.VenueUnavailable()
        return {"run": _count(body["tag"]), "order": body.get("order")}


@writes.route("/other")
class Other(MethodView):
    @access.requires("trade:execute")
    @idempotent
    @writes.response(200)
    def post(self):
        return {"other": True}


@pytest.fixture
def idem_client(app):
    if "idempotency_test" not in app.blueprints:
        app._got_first_request = False  # allow late registration in the test
        app.extensions["copytrade_api"].register_blueprint(writes)
    runs.clear()
    released.clear()
    yield app.test_client()
    released.set()  # a held request a failed test left running ends


def order(headers: dict, key: str | None, client, **body):
    body.setdefault("tag", "t")
    sent = dict(headers)
    if key is not None:
        sent["Idempotency-Key"] = key
    return client.post("/api/_idem/orders", json=body, headers=sent)


def test_replay_returns_the_first_answer(idem_client, auth_headers):
    key = str(uuid.uuid4())
    first = order(auth_headers, key, idem_client, order="A")
    assert first.status_code == 201 and first.get_json() == {"run": 1, "order": "A"}
    assert "Idempotent-Replay" not in first.headers
    again = order(auth_headers, key, idem_client, order="A")
    assert again.status_code == 201 and again.get_json() == {"run": 1, "order": "A"}
    assert again.headers["Idempotent-Replay"] == "true"
    assert runs == {"t": 1}
    # Without a key every request runs.
    order(auth_headers, None, idem_client)
    order(auth_headers, None, idem_client)
    assert runs == {"t": 3}


def test_the_key_is_scoped_to_the_user(idem_client, app, auth_headers, bound_db):
    other = User.create(email="other@example.com")
    other_headers = {"Authorization": f"Bearer {auth.issue_session(other).token}"}
    key = str(uuid.uuid4())
    assert order(auth_headers, key, idem_client).get_json()["run"] == 1
    mine = order(other_headers, key, idem_client)
    assert mine.get_json()["run"] == 2 and "Idempotent-Replay" not in mine.headers


def test_an_api_key_shares_its_users_keys(idem_client, auth_headers, api_key):
    key = str(uuid.uuid4())
    order(auth_headers, key, idem_client)
    agent = {"Authorization": f"Bearer {api_key('trade:execute')}"}
    assert order(agent, key, idem_client).headers["Idempotent-Replay"] == "true"


def test_same_key_different_request_is_refused(idem_client, auth_headers):
    key = str(uuid.uuid4())
    order(auth_headers, key, idem_client, order="A")
    body = order(auth_headers, key, idem_client, order="B").get_json()
    assert body["code"] == "bad_request" and "different request" in body["error"]
    other_route = idem_client.post("/api/_idem/other", json={"tag": "t", "order": "A"},
                                   headers={**auth_headers, "Idempotency-Key": key})
    assert other_route.status_code == 400
    assert runs == {"t": 1}


@pytest.mark.parametrize("key", ["not-a-uuid", "", "1234"])
def test_key_must_be_a_uuid(idem_client, auth_headers, key):
    response = order(auth_headers, key, idem_client)
    assert response.status_code == 400
    assert response.get_json()["code"] == "validation_failed"
    assert "Idempotency-Key" in response.get_json()["fields"]
    assert runs == {}


def test_server_errors_are_not_kept(idem_client, auth_headers):
    key = str(uuid.uuid4())
    failed = order(auth_headers, key, idem_client, fail_first=True, tag="f")
    assert failed.status_code == 503
    retried = order(auth_headers, key, idem_client, fail_first=True, tag="f")
    assert retried.status_code == 201 and "Idempotent-Replay" not in retried.headers
    assert order(auth_headers, key, idem_client, fail_first=True, tag="f"
                 ).headers["Idempotent-Replay"] == "true"


def test_records_expire_after_24_hours(idem_client, auth_headers):
    key = str(uuid.uuid4())
    order(auth_headers, key, idem_client)
    record = IdempotencyRecord.get()
    assert timedelta(hours=23, minutes=59) < record.expires_at - record.created_at \
        <= timedelta(hours=24)
    IdempotencyRecord.update(expires_at=datetime.now(UTC) - timedelta(seconds=1)).execute()
    assert order(auth_headers, key, idem_client).get_json()["run"] == 2


def test_store_down_refuses_keyed_writes(idem_client, auth_headers, bound_db):
    table = IdempotencyRecord._meta.table_name
    bound_db.execute_sql(f'ALTER TABLE "{table}" RENAME TO "{table}_away"')
    try:
        refused = order(auth_headers, str(uuid.uuid4()), idem_client)
        assert refused.status_code == 503
        assert refused.get_json()["code"] == "cache_error"
        assert int(refused.headers["Retry-After"]) > 0
        assert runs == {}
        assert order(auth_headers, None, idem_client).status_code == 201  # no key: runs
    finally:
        bound_db.execute_sql(f'ALTER TABLE "{table}_away" RENAME TO "{table}"')


def test_delete_key_route_replays(client, auth_headers):
    created = client.post("/api/keys", json={"name": "k", "scopes": ["read:account"]},
                          headers=auth_headers).get_json()
    headers = {**auth_headers, "Idempotency-Key": str(uuid.uuid4())}
    first = client.delete(f"/api/keys/{created['id']}", headers=headers)
    again = client.delete(f"/api/keys/{created['id']}", headers=headers)
    assert (first.status_code, again.status_code) == (204, 204)
    assert again.headers["Idempotent-Replay"] == "true" and again.data == b""


@pytest.fixture
def live_server(idem_client, app):
    """The app on a real threaded HTTP server (the test client is serial)."""
    with serving(app) as base:
        yield base


def test_parallel_duplicates_run_the_handler_once(live_server, auth_headers):
    key = str(uuid.uuid4())
    headers = {**auth_headers, "Idempotency-Key": key}
    body = {"tag": "p", "hold": True}
    results: list[httpx.Response] = []
    answered = threading.Semaphore(0)
    barrier = threading.Barrier(8)

    def send() -> None:
        barrier.wait()
        results.append(httpx.post(f"{live_server}/api/_idem/orders", headers=headers,
                                  json=body, timeout=DEADLINE))
        answered.release()

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    try:
        # The one that runs holds until released: the other seven are answered while it
        # still runs, however long a busy machine takes to send them.
        for _ in range(7):
            assert answered.acquire(timeout=DEADLINE), [r.status_code for r in results]
        assert [r.status_code for r in results] == [409] * 7, [r.text for r in results]
    finally:
        released.set()
    for thread in threads:
        thread.join()
    [fresh] = [r for r in results if r.status_code != 409]
    assert fresh.status_code == 201 and "Idempotent-Replay" not in fresh.headers
    for conflict in (r for r in results if r.status_code == 409):
        assert conflict.json()["code"] == "bad_request"
        assert int(conflict.headers["Retry-After"]) >= 1
    assert runs == {"p": 1}
    replay = httpx.post(f"{live_server}/api/_idem/orders", headers=headers, json=body,
                        timeout=DEADLINE)
    assert replay.status_code == 201 and replay.headers["Idempotent-Replay"] == "true"
    assert replay.json() == {"run": 1, "order": None}
    assert runs == {"p": 1}
