"""Per-IP token bucket on Redis: burst 500, refill 60/s by default; headers; 429; sharing."""

from __future__ import annotations

import math
import secrets
import time

import pytest

from app import create_app
from models.base import db
from tests.conftest import DEADLINE, app_settings, free_port

RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
# Tokens of rounding: the Lua script rounds microseconds and adds 0.001 before it floors.
SLACK = 0.01


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


class Bucket:
    """What the token bucket must hold at each answer, whatever the machine's speed.

    The bucket holds at most ``burst`` tokens and gains ``rate`` a second, so what tokens
    come while it is full are lost: before request i it holds the least, over the admitted
    requests j before it, of ``burst - (admitted from j on) + rate x (t_i - t_j)``, and
    ``burst`` (each j a moment it may have been full, just before its own request). Redis
    takes each request's token somewhere between its send and its answer, so the level is
    bounded by that least value with the shortest time between two requests (the later one's
    send less the earlier one's answer) and with the longest (answer less send): a request
    that takes seconds on a busy machine widens its own bounds by its own duration, no more.
    A fast machine runs the bucket dry and sees 429s, a busy one sees it refill."""

    def __init__(self, rate: int, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.admitted = 0
        self.refused = 0
        # The least of admitted_before_j - rate x t_j over the admitted requests j so far,
        # with t_j its answer (for the lower bound) or its send (for the upper one).
        self._least_low = self._least_high = math.inf

    def _levels(self, sent: float, answered: float) -> tuple[float, float]:
        """Bounds of the tokens held when a request sent at ``sent`` and answered at
        ``answered`` took its token."""
        low = self.burst - self.admitted + self.rate * sent + self._least_low
        high = self.burst - self.admitted + self.rate * answered + self._least_high
        return min(self.burst, low), min(self.burst, high)

    def send(self, client, method: str = "options", path: str = "/api/stats/platform",
             expect: int = 200, **request):
        """Send one request and check its answer against the bucket (``expect`` when it
        passes); the answer."""
        sent = time.monotonic()
        response = getattr(client, method)(path, **request)
        answered = time.monotonic()
        low, high = self._levels(sent, answered)
        remaining = int(response.headers["X-RateLimit-Remaining"])
        if response.status_code == 429:
            # Refused: less than a token (Remaining is the level rounded down).
            assert low < 1 + SLACK and remaining <= 1, (self.admitted, low, high, remaining)
            self.refused += 1
            return response
        assert response.status_code == expect, response.data
        assert high >= 1 - SLACK, (self.admitted, low, high)  # there was a token to take
        self._least_low = min(self._least_low, self.admitted - self.rate * answered)
        self._least_high = min(self._least_high, self.admitted - self.rate * sent)
        self.admitted += 1
        # What is left after this request's token, rounded down.
        assert math.floor(low - 1 - SLACK) <= remaining <= high - 1 + SLACK, (
            self.admitted, low - 1, high - 1, remaining)
        return response

    def send_until_refused(self, client, method: str = "get",
                           path: str = "/api/stats/platform", **request):
        """Send (each answer checked) until the bucket refuses one; that answer. A machine
        answering slower than the refill never sees one, so this fails after DEADLINE."""
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            response = self.send(client, method, path, **request)
            if response.status_code == 429:
                return response
        raise AssertionError(f"no request refused in {DEADLINE} s ({self.admitted} admitted)")


def test_default_bursts_500_then_refills_at_60_per_second(make_app):
    flask_app = make_app()
    settings = app_settings(flask_app)
    assert (settings.rate_limit_per_second, settings.rate_limit_burst) == (60, 500)
    client = client_for(flask_app)
    bucket = Bucket(60, 500)
    first = bucket.send(client, "get")
    started = time.monotonic()
    assert first.headers["X-RateLimit-Limit"] == "500"
    assert first.headers["X-RateLimit-Remaining"] == "499"
    assert int(first.headers["X-RateLimit-Reset"]) >= int(time.time())
    # Past the burst, and long enough for the refill to show (60 tokens a second).
    while bucket.admitted + bucket.refused < 700 or time.monotonic() - started < 1.5:
        bucket.send(client)
    # Token bucket, not a window: after a second's pause about 60 more pass at once.
    time.sleep(1.0)
    for _ in range(100):
        bucket.send(client)


def test_a_refused_request_says_when_to_come_back(make_app):
    # One token a second from a burst of 10: sent until one is refused (a busy machine may
    # get a token or two back on the way; Bucket checks each answer).
    client = client_for(make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=10))
    before = time.time()
    refused = Bucket(1, 10).send_until_refused(client)
    body = refused.get_json()
    assert body["code"] == "rate_limited" and body["error"]
    retry_after = refused.headers["Retry-After"]
    assert retry_after.isdigit() and int(retry_after) >= 1
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert refused.headers["X-RateLimit-Limit"] == "10"
    # Less than a token left: full again more than nine seconds after it was sent.
    assert int(refused.headers["X-RateLimit-Reset"]) >= before + 9


def test_smaller_limit(make_app):
    # One token a second from a burst of 10, each answer checked against the time it took
    # (Bucket): a busy machine's slow requests may see a token come back before the
    # bucket runs dry, never more than the time allows.
    client = client_for(make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=10))
    bucket = Bucket(1, 10)
    assert [bucket.send(client, "get").status_code for _ in range(10)] == [200] * 10
    refused = bucket.send_until_refused(client)
    assert refused.headers["Retry-After"] == "1"
    time.sleep(1.2)  # 1.2 tokens: one request passes, and the bucket is dry again
    assert bucket.send(client, "get").status_code == 200
    bucket.send_until_refused(client)


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
    # A full bucket of 3 admits the first three whatever their answers; the next ones are
    # sent until one is refused (a busy machine may earn a token back on the way).
    client = client_for(make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=3))
    bucket = Bucket(1, 3)
    responses = [bucket.send(client, "get"),
                 bucket.send(client, "get", "/api/users/me", expect=401),
                 bucket.send(client, "post", "/api/auth/magic", expect=400,
                             json={"email": "nope"})]
    responses.append(bucket.send_until_refused(client))
    for response in responses:
        assert all(name in response.headers for name in RATE_HEADERS), response.headers
    assert responses[0].headers["X-RateLimit-Remaining"] == "2"
    assert responses[-1].headers["X-RateLimit-Remaining"] == "0"


# The tests below drain a bucket of 20 at one token a second: another bucket's answers
# (a full one says 19 left) differ from the drained one's until ~15 s have passed, which
# Bucket's bounds allow for only when the machine really was that slow.
BURST = 20


def test_buckets_are_per_client_address(make_app):
    flask_app = make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=BURST)
    greedy, other = client_for(flask_app), client_for(flask_app)
    bucket = Bucket(1, BURST)
    for _ in range(BURST):
        bucket.send(greedy, "get")
    bucket.send_until_refused(greedy)
    assert Bucket(1, BURST).send(other, "get").headers["X-RateLimit-Remaining"] == "19"


def test_an_ipv6_client_is_its_64_one_bucket_for_every_address_inside(make_app):
    flask_app = make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=BURST)
    prefix = f"2001:db8:{secrets.randbelow(0xffff):x}:{secrets.randbelow(0xffff):x}"
    bucket = Bucket(1, BURST)
    # A host walking its /64, a new address per request, drains one bucket.
    for n in range(BURST):
        bucket.send(client_for(flask_app, f"{prefix}:{n:x}::{n + 1:x}"), "get")
    bucket.send_until_refused(client_for(flask_app, f"{prefix}:ffff:ffff:ffff:fff0"))
    # The next /64 is another client.
    neighbour = client_for(flask_app, f"{prefix[:-1]}{(int(prefix[-1], 16) + 1) % 16:x}::1")
    assert Bucket(1, BURST).send(neighbour, "get").headers["X-RateLimit-Remaining"] == "19"


def test_workers_share_one_bucket_through_redis(make_app):
    ip = "10.250.0.1-" + secrets.token_hex(3)
    one = client_for(make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=BURST), ip)
    two = client_for(make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=BURST), ip)
    bucket = Bucket(1, BURST)  # one bucket: each answer from either app is checked on it
    for n in range(BURST):
        bucket.send((one, two)[n % 2], "get")
    bucket.send_until_refused(two)
    assert bucket.send_until_refused(one).status_code == 429


def test_redis_down_admits_requests(make_app):
    down = make_app(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0", RATE_LIMIT_BURST=1)
    client = client_for(down)
    for _ in range(3):
        response = client.get("/api/stats/platform")
        assert response.status_code == 200
        assert "X-RateLimit-Remaining" not in response.headers


def _forwarded(address: str) -> dict:
    return {"headers": {"X-Forwarded-For": address}}


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_bucket(make_app):
    """Issue 18 finding 4: with TRUSTED_PROXIES=1 the proxy's X-Forwarded-For names the client."""
    proxy = client_for(make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=BURST,
                                TRUSTED_PROXIES=1))
    first, second, third = (f"198.51.100.{secrets.randbelow(250)}",
                            f"203.0.113.{secrets.randbelow(250)}",
                            f"192.0.2.{secrets.randbelow(250)}")
    firsts = Bucket(1, BURST)
    for _ in range(BURST):
        firsts.send(proxy, "get", **_forwarded(first))
    firsts.send_until_refused(proxy, **_forwarded(first))
    seconds = Bucket(1, BURST).send(proxy, "get", **_forwarded(second))
    assert seconds.headers["X-RateLimit-Remaining"] == "19"
    # Only the hop the proxy appended counts: a client cannot pick a fresh bucket by
    # sending its own X-Forwarded-For (the proxy appends the real address after it).
    assert firsts.send_until_refused(proxy, **_forwarded(f"{third}, {first}")).status_code == 429


def test_without_trusted_proxies_x_forwarded_for_is_ignored(make_app):
    peer = client_for(make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=BURST))
    bucket = Bucket(1, BURST)  # one bucket, the peer's address, whatever each claims
    for n in range(BURST):
        bucket.send(peer, "get", **_forwarded(f"192.0.2.{n}"))
    bucket.send_until_refused(peer, **_forwarded("192.0.2.250"))


def test_the_fixed_limits_check_is_the_one_that_runs_and_any_other_set_falls_back(make_app):
    from flask import Flask

    from blueprints.ratelimit import EXTENSION, FixedLimiter

    built = make_app(RATE_LIMIT_PER_SECOND=1, RATE_LIMIT_BURST=2)
    client = client_for(built)
    refused = Bucket(1, 2).send_until_refused(client)
    assert refused.status_code == 429 and refused.get_json()["code"] == "rate_limited"
    assert built.extensions[EXTENSION]._fixed is True  # the direct check answered those

    # A set this app never builds (a default limit): flask-limiter's own check, which
    # still limits.
    other = Flask("other")
    limiter = FixedLimiter(key_func=lambda: "one", default_limits=["1/minute"],
                           storage_uri="memory://")
    limiter.init_app(other)

    def home() -> str:
        return "ok"

    other.add_url_rule("/", "home", home)
    answers = [other.test_client().get("/").status_code for _ in range(2)]
    assert limiter._fixed is False
    assert answers == [200, 429]
