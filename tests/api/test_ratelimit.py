"""Per-IP token bucket on Redis: burst 500, refill 60/s by default; headers; 429; sharing."""

from __future__ import annotations

import secrets
import time

import pytest

from app import create_app
from models.base import db
from tests.conftest import app_settings, free_port

RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")


@pytest.fixture
def make_app(app_config, app):
    """Build apps with rate-limit settings (none given: the real defaults)."""
    built = []

    def build(**overrides):
        config = {k: v for k, v in app_config.items() if not k.startswith("RATE_LIMIT")}
        config.update(overrides)
        new = create_app(config)
        built.append(new)
        return new

    yield build
    for other in built:
        database = other.extensions["database"]
        if hasattr(database, "close_all"):
            database.close_all()
    db.initialize(app.extensions["database"])


def client_for(flask_app, ip: str | None = None):
    """A test client coming from its own address (so tests never share a bucket)."""
    ip = ip or f"10.{secrets.randbelow(250)}.{secrets.randbelow(250)}.{secrets.randbelow(250)}"
    client = flask_app.test_client()
    client.environ_base["REMOTE_ADDR"] = ip
    return client


def drain(client, path: str = "/api/stats/platform", limit: int = 5000):
    """Send (cheap OPTIONS requests) until the first 429; return (admitted, 429, its time)."""
    for admitted in range(limit):
        response = client.options(path)
        if response.status_code == 429:
            return admitted, response, time.monotonic()
        assert response.status_code == 200, response.data
    raise AssertionError("never limited")


def test_default_bursts_500_then_refills_at_60_per_second(make_app):
    flask_app = make_app()
    settings = app_settings(flask_app)
    assert (settings.rate_limit_per_second, settings.rate_limit_burst) == (60, 500)
    client = client_for(flask_app)
    first = client.get("/api/stats/platform")
    assert first.headers["X-RateLimit-Limit"] == "500"
    assert first.headers["X-RateLimit-Remaining"] == "499"
    assert int(first.headers["X-RateLimit-Reset"]) >= int(time.time())
    started = time.monotonic()
    admitted, refused, exhausted_at = drain(client)
    admitted += 1
    # The burst plus what refilled while we sent it.
    refilled = 60 * (exhausted_at - started)
    assert 500 <= admitted <= 500 + refilled + 3, (admitted, refilled)

    body = refused.get_json()
    assert body["code"] == "rate_limited" and body["error"]
    retry_after = refused.headers["Retry-After"]
    assert retry_after.isdigit() and int(retry_after) >= 1
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert refused.headers["X-RateLimit-Limit"] == "500"
    assert int(refused.headers["X-RateLimit-Reset"]) >= int(time.time()) + 7

    # Token bucket, not a window: a tenth of a second later a few requests pass again...
    time.sleep(0.1)
    assert client.get("/api/stats/platform").status_code == 200
    # ...and over the next second about 60 do.
    time.sleep(1.0)
    recovered, _, ended = drain(client)
    expected = 60 * (ended - exhausted_at) - 1  # minus the request sent after 0.1 s
    assert abs(recovered - expected) <= max(6, 0.12 * expected), (recovered, expected)


def test_smaller_limit(make_app):
    # One token a second: the checks below hold however slowly a busy machine answers,
    # as long as two requests take less than 0.8 s.
    client = client_for(make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=10))
    statuses = [client.get("/api/stats/platform").status_code for _ in range(11)]
    assert statuses == [200] * 10 + [429]
    refused = client.get("/api/stats/platform")
    assert refused.headers["Retry-After"] == "1"
    time.sleep(1.2)  # 1.2 tokens
    assert client.get("/api/stats/platform").status_code == 200
    assert client.get("/api/stats/platform").status_code == 429


def test_bigger_limit(make_app):
    client = client_for(make_app(RATE_LIMIT_PER_SECOND=10, RATE_LIMIT_BURST=1000))
    started = time.monotonic()
    responses = [client.options("/api/stats/platform") for _ in range(600)]
    elapsed = time.monotonic() - started
    assert {r.status_code for r in responses} == {200}  # past the default burst of 500
    remaining = [int(r.headers["X-RateLimit-Remaining"]) for r in responses]
    assert remaining[0] == 999
    assert 400 - 1 <= remaining[-1] <= 400 + 10 * elapsed + 1, (remaining[-1], elapsed)
    assert all(r.headers["X-RateLimit-Limit"] == "1000" for r in responses)


def test_every_response_carries_the_headers(make_app):
    client = client_for(make_app(RATE_LIMIT_PER_SECOND=5, RATE_LIMIT_BURST=3))
    responses = [client.get("/api/stats/platform"), client.get("/api/users/me"),
                 client.post("/api/auth/magic", json={"email": "nope"})]
    assert [r.status_code for r in responses] == [200, 401, 400]
    responses.append(client.get("/api/stats/platform"))
    assert responses[-1].status_code == 429
    for response in responses:
        assert all(name in response.headers for name in RATE_HEADERS), response.headers
    assert [r.headers["X-RateLimit-Remaining"] for r in responses] == ["2", "1", "0", "0"]


def test_buckets_are_per_client_address(make_app):
    flask_app = make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=2)
    greedy, other = client_for(flask_app), client_for(flask_app)
    assert [greedy.get("/api/stats/platform").status_code for _ in range(3)] == [200, 200, 429]
    assert other.get("/api/stats/platform").status_code == 200


def test_workers_share_one_bucket_through_redis(make_app):
    ip = "10.250.0.1-" + secrets.token_hex(3)
    one = client_for(make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=3), ip)
    two = client_for(make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=3), ip)
    assert [c.get("/api/stats/platform").status_code for c in (one, two, one)] == [200] * 3
    assert two.get("/api/stats/platform").status_code == 429


def test_redis_down_admits_requests(make_app):
    down = make_app(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0", RATE_LIMIT_BURST=1)
    client = client_for(down)
    for _ in range(3):
        response = client.get("/api/stats/platform")
        assert response.status_code == 200
        assert "X-RateLimit-Remaining" not in response.headers


def _forwarded(client, address: str):
    return client.get("/api/stats/platform", headers={"X-Forwarded-For": address})


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_bucket(make_app):
    """Issue 18 finding 4: with TRUSTED_PROXIES=1 the proxy's X-Forwarded-For names the client."""
    proxy = client_for(make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=2,
                                TRUSTED_PROXIES=1))
    first, second = (f"198.51.100.{secrets.randbelow(250)}", f"203.0.113.{secrets.randbelow(250)}")
    assert [_forwarded(proxy, first).status_code for _ in range(3)] == [200, 200, 429]
    assert _forwarded(proxy, second).status_code == 200
    # Only the hop the proxy appended counts: a client cannot pick its bucket by
    # sending its own X-Forwarded-For (the proxy appends the real address after it).
    assert _forwarded(proxy, f"{second}, {first}").status_code == 429


def test_without_trusted_proxies_x_forwarded_for_is_ignored(make_app):
    peer = client_for(make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=2))
    statuses = [_forwarded(peer, f"192.0.2.{n}").status_code for n in range(3)]
    assert statuses == [200, 200, 429]  # one bucket: the peer's address
