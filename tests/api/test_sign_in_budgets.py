"""Issue 18, findings 2 and 10: sign-in codes cannot be guessed across codes, sign-in
emails are budgeted per address and per IP, and a new email leaves a pending code usable.

The budgets live in the database: they hold with Redis stopped mid-run.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import replace

import pytest
import redis

from app import create_app
from devstack.chain.devchain import die_with_parent
from models import LoginCode, SignInEvent, User
from models.base import db
from tests.api.test_auth import assert_error
from tests.conftest import free_port


def _wrong(code: str) -> str:
    return f"{(int(code) + 1) % 1_000_000:06d}"


def _client(flask_app, ip: str):
    client = flask_app.test_client()
    client.environ_base["REMOTE_ADDR"] = ip
    return client


def _verify(client, email: str, code: str):
    return client.post("/api/auth/verify-code", json={"email": email, "code": code})


def assert_locked(response) -> None:
    body = assert_error(response, 429, "rate_limited")
    assert "Too many attempts" in body["error"]
    assert int(response.headers["Retry-After"]) > 0


def test_guessing_across_many_codes_hits_the_lockout(client, inbox, bound_db):
    email = "target@example.com"
    # Each new code used to buy five more guesses; now ten misses per hour is all there is.
    for _ in range(2):
        assert client.post("/api/auth/magic", json={"email": email}).status_code == 202
        code, _ = inbox.last_for(email)
        for _ in range(5):
            assert_error(_verify(client, email, _wrong(code)), 401, "invalid_token")
    assert client.post("/api/auth/magic", json={"email": email}).status_code == 202
    code, token = inbox.last_for(email)
    # The owner's right code is refused too while the address is locked.
    assert_locked(_verify(client, email, code))
    assert User.select().count() == 0
    # Refused tries are not counted as misses: the lock is ten misses, not more.
    assert SignInEvent.select().where(SignInEvent.kind == "miss").count() == 10
    # The emailed link (256 random bits, not guessable) still signs its owner in.
    assert client.post("/api/auth/magic", json={"token": token}).status_code == 200


def test_ten_addresses_share_the_per_email_budget(app, inbox, bound_db):
    email = "spread@example.com"
    _client(app, "10.1.0.1").post("/api/auth/magic", json={"email": email})
    code, _ = inbox.last_for(email)
    for i in range(10):
        response = _verify(_client(app, f"10.1.1.{i}"), email, "999999" if code != "999999"
                           else "888888")
        assert response.status_code in (401,), response.data
        if i % 4 == 3:  # keep a code open: the per-code limit is not what stops them
            _client(app, "10.1.0.1").post("/api/auth/magic", json={"email": email})
    code, _ = inbox.last_for(email)
    assert_locked(_verify(_client(app, "10.1.2.1"), email, code))


def test_one_ip_guessing_many_addresses_is_limited(app, inbox, bound_db, settings,
                                                   set_settings):
    set_settings(sign_in=replace(settings.sign_in, misses_per_ip=3))
    guesser = _client(app, "10.2.0.1")
    for i in range(3):
        assert_error(_verify(guesser, f"victim{i}@example.com", "123456"), 401, "invalid_token")
    refused = _verify(guesser, "victim9@example.com", "123456")
    assert_error(refused, 429, "rate_limited")
    # Another client is not affected.
    assert_error(_verify(_client(app, "10.2.0.2"), "victim9@example.com", "123456"),
                 401, "invalid_token")


def test_an_ipv6_client_guessing_from_many_addresses_of_its_64_is_limited(
        app, inbox, bound_db, settings, set_settings):
    set_settings(sign_in=replace(settings.sign_in, misses_per_ip=3))
    for i in range(3):
        guesser = _client(app, f"2001:db8:5:7:{i:x}::{i + 1:x}")
        assert_error(_verify(guesser, f"victim{i}@example.com", "123456"), 401, "invalid_token")
    refused = _verify(_client(app, "2001:db8:5:7:ffff::9"), "victim9@example.com", "123456")
    assert_error(refused, 429, "rate_limited")
    # The next /64 is another client.
    assert_error(_verify(_client(app, "2001:db8:5:8::1"), "victim9@example.com", "123456"),
                 401, "invalid_token")


def test_sign_in_emails_are_budgeted_per_address_without_saying_so(client, inbox, bound_db):
    email = "flooded@example.com"
    answers = [client.post("/api/auth/magic", json={"email": email}) for _ in range(7)]
    assert [a.status_code for a in answers] == [202] * 7
    assert len({a.get_data() for a in answers}) == 1  # the same answer, sent or not
    assert sum(1 for rcpt, _ in inbox.messages if rcpt == [email]) == 5
    assert LoginCode.select().where(LoginCode.email == email).count() == 5


def test_sign_in_emails_are_budgeted_per_ip(app, inbox, bound_db, settings, set_settings):
    set_settings(sign_in=replace(settings.sign_in, emails_per_ip=3))
    sender = _client(app, "10.3.0.1")
    for i in range(3):
        assert sender.post("/api/auth/magic", json={"email": f"n{i}@example.com"}
                           ).status_code == 202
    refused = sender.post("/api/auth/magic", json={"email": "n9@example.com"})
    assert_error(refused, 429, "rate_limited")
    assert int(refused.headers["Retry-After"]) > 0
    assert len(inbox.messages) == 3


def test_a_new_email_does_not_void_the_pending_code(client, inbox, bound_db):
    email = "victim@example.com"
    client.post("/api/auth/magic", json={"email": email})
    victims_code, _ = inbox.last_for(email)
    # Someone else keeps asking for emails to the victim's address.
    for _ in range(3):
        assert client.post("/api/auth/magic", json={"email": email}).status_code == 202
    newest, newest_token = inbox.last_for(email)
    ok = _verify(client, email, victims_code)
    assert ok.status_code == 200, ok.data
    # Using one retires the others: a stolen older email is worthless afterwards.
    if newest != victims_code:
        assert_error(_verify(client, email, newest), 401, "invalid_token")
    assert_error(client.post("/api/auth/magic", json={"token": newest_token}),
                 401, "invalid_token")


# ---- Redis stopped: the budgets are in the database --------------------------------------


@pytest.fixture
def private_redis():
    """A redis-server of this test's own, to stop mid-test; its URL and process."""
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        preexec_fn=die_with_parent)
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 10
    while True:
        try:
            redis.Redis.from_url(url, socket_connect_timeout=0.2).ping()
            break
        except redis.exceptions.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    yield url, process
    if process.poll() is None:
        process.terminate()
    process.wait(10)


@pytest.fixture
def app_on_private_redis(app_config, app, private_redis):
    """An app whose Redis (rate limits) is ``private_redis``; rate limiting on."""
    url, _ = private_redis
    config = {**app_config, "REDIS_URL": url, "RATE_LIMIT_PER_SECOND": 1000,
              "RATE_LIMIT_BURST": 1000}
    built = create_app(config)
    yield built
    database = built.extensions["database"]
    if hasattr(database, "close_all"):
        database.close_all()
    db.initialize(app.extensions["database"])


def test_the_lockout_holds_with_redis_stopped(app, app_on_private_redis, private_redis, inbox,
                                              bound_db):
    # inbox comes after the private app: its mail server is set on that app's settings
    _, redis_process = private_redis
    client = _client(app_on_private_redis, "10.4.0.1")
    email = "redis-down@example.com"
    client.post("/api/auth/magic", json={"email": email})
    code, _ = inbox.last_for(email)
    for _ in range(4):
        assert_error(_verify(client, email, _wrong(code)), 401, "invalid_token")
    redis_process.terminate()
    redis_process.wait(10)
    # Rate limits fail open now; the sign-in budget does not.
    client.post("/api/auth/magic", json={"email": email})
    code, _ = inbox.last_for(email)
    for i in range(6):
        assert_error(_verify(_client(app_on_private_redis, f"10.4.1.{i}"), email,
                             _wrong(code)), 401, "invalid_token")
    assert_locked(_verify(client, email, code))

