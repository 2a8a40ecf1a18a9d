"""Per-IP rate limiting: flask-limiter, running our token bucket kept in Redis
(services/platform/ratelimit.py).

Every client IP (an IPv6 client's /64, which one host can walk through) gets one bucket
for the whole app (an application limit), shared by all gunicorn workers through Redis:
``RATE_LIMIT_PER_SECOND`` sustained (default 60), bursts up to ``RATE_LIMIT_BURST``
(default 500). Every response carries ``X-RateLimit-Limit`` (bucket capacity),
``X-RateLimit-Remaining`` and ``X-RateLimit-Reset`` (Unix time the bucket is full again);
a refused request gets 429 ``rate_limited`` with ``Retry-After`` (whole seconds until a token).
``RATE_LIMIT_ENABLED=False`` turns it off. Requests that match no route and static files
are not counted.

flask-limiter resolves which limits apply to a request on every request (it parses the
limit strings and rebuilds the limit objects each time), which its profile showed costing
as much as the Redis round trip. Our limits never change after startup, so each route's
resolution is done once and kept (``_resolve_once``); the headers come from the bucket as
the hit left it (no second round trip). See README "Rate limits" for the measurement.
"""

from __future__ import annotations

import math
import time
from typing import Any

from flask import Flask, Response, current_app, request
from flask_limiter import Limiter, RequestLimit

from services.platform import credential_generation, errors, metrics, redis_client
from services.platform import ratelimit as buckets
from services.platform.runtime import runtime

EXTENSION = "copytrade_limiter"


def _client() -> str:
    # ProxyFix (TRUSTED_PROXIES) has already put the forwarded client here; an IPv6
    # client is its /64, which one host can walk through.
    return buckets.client_key(request.remote_addr, "127.0.0.1")


def _on_breach(limit: RequestLimit) -> None:
    """Refuse with our error shape and an honest Retry-After."""
    metrics.rate_limit_rejected()
    state = _this_request()
    raise errors.RateLimited("Too many requests from this address; slow down.",
                             retry_after=state.retry_after_seconds if state else 1)


def _this_request() -> buckets.BucketState | None:
    """The bucket as this request's hit left it (None before one, or without a limiter).

    The strategy keeps its thread's latest hit and ``_forget`` drops it as each request
    ends, so what it holds is this request's."""
    limiter: Limiter | None = current_app.extensions.get(EXTENSION)
    return limiter.limiter.recent() if limiter is not None else None  # type: ignore[attr-defined]


def _forget(_: BaseException | None = None) -> None:
    limiter: Limiter | None = current_app.extensions.get(EXTENSION)
    if limiter is not None:
        limiter.limiter.forget()  # type: ignore[attr-defined]


def _add_headers(response: Response) -> Response:
    state = _this_request()
    if state is None or not state.known:
        return response
    response.headers["X-RateLimit-Limit"] = str(state.capacity)
    response.headers["X-RateLimit-Remaining"] = str(state.remaining)
    response.headers["X-RateLimit-Reset"] = str(math.ceil(time.time() + state.full_in))
    return response


def credential_generation_seen() -> bytes | str | None:
    """The credential generation Redis gave with this request's token (None: not known)."""
    state = _this_request()
    return state.generation if state is not None and state.known else None


def redis_answered() -> bool:
    """Whether this request's token came from Redis (so Redis is reachable right now)."""
    state = _this_request()
    return state is not None and state.known


def _resolve_once(limiter: Limiter) -> None:
    """Keep each route's resolved limits and exemptions: flask-limiter works them out again
    on every request, and ours are fixed once the app is built (no decorated limits)."""
    manager = limiter.limit_manager
    resolve, exemption = manager.resolve_limits, manager.exemption_scope
    resolved: dict[tuple[Any, ...], Any] = {}
    exempted: dict[tuple[Any, ...], Any] = {}

    def resolve_limits(app: Flask, endpoint: str | None = None, blueprint: str | None = None,
                       callable_name: str | None = None, in_middleware: bool = False,
                       marked_for_limiting: bool = False) -> Any:
        key = (endpoint, blueprint, callable_name, in_middleware, marked_for_limiting)
        found = resolved.get(key)
        if found is None:
            found = resolved[key] = resolve(app, endpoint, blueprint, callable_name,
                                            in_middleware, marked_for_limiting)
        return found

    def exemption_scope(app: Flask, endpoint: str | None, blueprint: str | None) -> Any:
        key = (endpoint, blueprint)
        found = exempted.get(key)
        if found is None:
            found = exempted[key] = exemption(app, endpoint, blueprint)
        return found

    manager.resolve_limits = resolve_limits  # type: ignore[method-assign]
    manager.exemption_scope = exemption_scope  # type: ignore[method-assign]


def init_app(app: Flask) -> Limiter | None:
    """Install the limiter on ``app`` (before the access gate, so floods stop first)."""
    built = runtime()
    settings = built.settings
    if not settings.rate_limit_enabled:
        return None
    # Runs after flask-limiter's own after_request (registered later, run earlier).
    app.after_request(_add_headers)
    app.teardown_request(_forget)
    limiter = Limiter(
        key_func=_client,
        # "N per 1 second": the bucket refills at N tokens a second and holds the burst.
        application_limits=[f"{int(settings.rate_limit_per_second)}/second"],
        strategy=buckets.STRATEGY_NAME,
        storage_uri=buckets.SCHEME_PREFIX + built.redis_url,
        storage_options={
            "burst": settings.rate_limit_burst,
            "key_prefix": f"{settings.redis_prefix}ratelimit",
            # Read in the same round trip: what a cached API key is checked against.
            "generation_key": credential_generation.key(settings.redis_prefix),
            # Share the app's client pool (bounded timeouts) instead of a second one.
            "connection_pool": redis_client.connect(built.redis_url).connection_pool,
        },
        headers_enabled=False,  # ours carry the bucket's meaning; see _add_headers
        on_breach=_on_breach,
        swallow_errors=False,
    )
    limiter.init_app(app)
    _resolve_once(limiter)
    app.extensions[EXTENSION] = limiter
    return limiter
