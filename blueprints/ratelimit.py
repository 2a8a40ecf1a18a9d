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
from flask_limiter import Limiter, RateLimitExceeded, RequestLimit

from blueprints import header_writes
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
    header_writes.set_known(response.headers, (  # numbers: nothing to check
        ("X-RateLimit-Limit", str(state.capacity)),
        ("X-RateLimit-Remaining", str(state.remaining)),
        ("X-RateLimit-Reset", str(math.ceil(time.time() + state.full_in)))))
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


class FixedLimiter(Limiter):
    """flask-limiter, whose before-request check goes straight to the limits when they are
    what this app builds: application limits only (no decorated, blueprint, default or meta
    limits, no request filters, no in-memory fallback, no conditional deduction).

    Its generic check re-derives, on every request, what cannot change in that case (the
    filters, the meta limits, ordered sets of limits already seen, a request context looked
    up seven times): more CPU than the Redis call it wraps. Each endpoint's limits are
    resolved once; every request takes each one's token and, when refused, runs the breach
    callbacks and raises ``RateLimitExceeded`` as flask-limiter does. Any other configuration
    takes flask-limiter's own path. The configuration is read at the first request, as
    ``_resolve_once`` reads the limits: they are fixed once the app serves.
    """

    _plans: dict[tuple[str, str | None], list[Any]]
    _fixed: bool | None = None

    def _fixed_configuration(self) -> bool:
        manager = self.limit_manager
        return not (self._request_filters or self._meta_limits or self._in_memory_fallback_enabled
                    or self._marked_for_limiting or self._key_prefix
                    or manager._default_limits or manager._decorated_limits
                    or manager._blueprint_limits or manager._endpoint_hints
                    or any(limit.deduct_when for limit in manager.application_limits))

    def _check_request_limit(self, callable_name: str | None = None,
                             in_middleware: bool = True) -> None:
        """Take this request's tokens (flask-limiter's check when the limits are not fixed)."""
        if self._fixed is None:
            self._fixed, self._plans = self._fixed_configuration(), {}
        if not (self._fixed and in_middleware and callable_name is None):
            return super()._check_request_limit(callable_name, in_middleware)
        endpoint = self.identify_request()
        if not endpoint or endpoint.rpartition(".")[2] == "static" or not (
                self.enabled and self.initialized):
            return None
        blueprint = request.blueprint
        plan = self._plans.get((endpoint, blueprint))
        if plan is None:
            plan = self._plans[(endpoint, blueprint)] = self.limit_manager.resolve_limits(
                current_app, endpoint, blueprint, None, True, False)[0]
        method = request.method
        for limit in plan:
            if limit.is_exempt or limit.method_exempt:
                continue
            args = [limit.key_func(), limit.scope_for(endpoint, method)]
            if not all(args):
                continue  # as flask-limiter: a limit without its key is skipped
            if not self.limiter.hit(limit.limit, *args, cost=limit.deduction_amount):
                breached = RequestLimit(self, limit.limit, args, True, limit.shared)
                self.context.view_rate_limit = breached
                self.context.view_rate_limits = [breached]
                for callback in dict.fromkeys([self._on_breach, limit.on_breach]):
                    if callback:
                        callback(breached)
                raise RateLimitExceeded(limit)
        return None


def init_app(app: Flask) -> Limiter | None:
    """Install the limiter on ``app`` (before the access gate, so floods stop first)."""
    built = runtime()
    settings = built.settings
    if not settings.rate_limit_enabled:
        return None
    # Runs after flask-limiter's own after_request (registered later, run earlier).
    app.after_request(_add_headers)
    app.teardown_request(_forget)
    limiter = FixedLimiter(
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
