"""Per-IP rate limiting: one token bucket per client IP, kept in Redis
(services/platform/ratelimit.py).

Every client IP gets one bucket for the whole app (an application limit), shared
by all gunicorn workers through Redis: ``RATE_LIMIT_PER_SECOND`` sustained
(default 60), bursts up to ``RATE_LIMIT_BURST`` (default 500). Every response
carries ``X-RateLimit-Limit`` (bucket capacity), ``X-RateLimit-Remaining`` and
``X-RateLimit-Reset`` (Unix time the bucket is full again); a refused request
gets 429 ``rate_limited`` with ``Retry-After`` (whole seconds until a token).
``RATE_LIMIT_ENABLED=False`` turns it off. Requests that match no route and static files
are not counted.

One before-request hook takes a token (one Lua call, one Redis round trip) and keeps the
bucket's state for the response headers; it is the whole per-request cost. (It used to be
flask-limiter's extension over the same bucket, whose per-request limit resolution cost
as much again as the round trip: see README "Capacity".)
"""

from __future__ import annotations

import math
import time

from flask import Flask, Response, current_app, g, request

from services.platform import errors, metrics, redis_client
from services.platform import ratelimit as buckets

EXTENSION = "copytrade_limiter"
_STATE = "rate_limit_state"


def _client() -> str:
    # ProxyFix (TRUSTED_PROXIES) has already put the forwarded client here.
    return request.remote_addr or "127.0.0.1"


def _take() -> None:
    """Take a token from the client's bucket; 429 with an honest Retry-After when empty."""
    endpoint = request.endpoint
    if not endpoint or endpoint.rsplit(".", 1)[-1] == "static":
        return
    limiter: buckets.AppRateLimit = current_app.extensions[EXTENSION]
    state = limiter.take(_client())
    g.setdefault(_STATE, state)
    if not state.allowed:
        metrics.rate_limit_rejected()
        raise errors.RateLimited("Too many requests from this address; slow down.",
                                 retry_after=state.retry_after_seconds)


def _add_headers(response: Response) -> Response:
    state: buckets.BucketState | None = g.get(_STATE)
    if state is None or not state.known:
        return response
    response.headers["X-RateLimit-Limit"] = str(state.capacity)
    response.headers["X-RateLimit-Remaining"] = str(state.remaining)
    response.headers["X-RateLimit-Reset"] = str(math.ceil(time.time() + state.full_in))
    return response


def redis_answered() -> bool:
    """Whether this request's token came from Redis (so Redis is reachable right now)."""
    state: buckets.BucketState | None = g.get(_STATE)
    return state is not None and state.known


def init_app(app: Flask) -> buckets.AppRateLimit | None:
    """Install the limiter on ``app`` (before the access gate, so floods stop first)."""
    if not app.config.get("RATE_LIMIT_ENABLED", True):
        return None
    url = app.config["REDIS_URL"]
    limiter = buckets.AppRateLimit(
        # Share the app's client pool (bounded timeouts) instead of a second one.
        redis_client.connect(url),
        rate_per_second=float(app.config["RATE_LIMIT_PER_SECOND"]),
        capacity=int(app.config["RATE_LIMIT_BURST"]),
        key_prefix=f"{app.config['REDIS_PREFIX']}ratelimit")
    app.before_request(_take)
    app.after_request(_add_headers)
    app.extensions[EXTENSION] = limiter
    return limiter
