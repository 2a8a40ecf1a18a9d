"""Per-IP rate limiting: flask-limiter on Redis with our token-bucket strategy.

Every client IP gets one bucket for the whole app (an application limit), shared
by all gunicorn workers through Redis: ``RATE_LIMIT_PER_SECOND`` sustained
(default 60), bursts up to ``RATE_LIMIT_BURST`` (default 500). Every response
carries ``X-RateLimit-Limit`` (bucket capacity), ``X-RateLimit-Remaining`` and
``X-RateLimit-Reset`` (Unix time the bucket is full again); a refused request
gets 429 ``rate_limited`` with ``Retry-After`` (whole seconds until a token).
``RATE_LIMIT_ENABLED=False`` turns it off.
"""

from __future__ import annotations

import math
import time

from flask import Flask, Response, current_app
from flask_limiter import Limiter, RequestLimit
from flask_limiter.util import get_remote_address

from services import errors, metrics, redis_client
from services import ratelimit as buckets

EXTENSION = "copytrade_limiter"


def _on_breach(limit: RequestLimit) -> None:
    """Refuse with our error shape and an honest Retry-After."""
    metrics.rate_limit_rejected()
    strategy = current_app.extensions[EXTENSION].limiter
    state = strategy.last_hit(limit.limit, *limit.request_args, keep=True)
    raise errors.RateLimited("Too many requests from this address; slow down.",
                             retry_after=max(1, math.ceil(state.retry_in) if state.known
                                             else 1))


def _add_headers(response: Response) -> Response:
    limiter: Limiter | None = current_app.extensions.get(EXTENSION)
    current = limiter.current_limit if limiter is not None else None
    if current is None:
        return response
    state = limiter.limiter.last_hit(current.limit, *current.request_args)
    if not state.known:
        return response
    response.headers["X-RateLimit-Limit"] = str(state.capacity)
    response.headers["X-RateLimit-Remaining"] = str(state.remaining)
    response.headers["X-RateLimit-Reset"] = str(math.ceil(time.time() + state.full_in))
    return response


def init_app(app: Flask) -> Limiter | None:
    """Install the limiter on ``app`` (before the access gate, so floods stop first)."""
    if not app.config.get("RATE_LIMIT_ENABLED", True):
        return None
    rate = int(app.config["RATE_LIMIT_PER_SECOND"])
    burst = int(app.config["RATE_LIMIT_BURST"])
    url = app.config["REDIS_URL"]
    # Runs after flask-limiter's own after_request (registered later, run earlier).
    app.after_request(_add_headers)
    limiter = Limiter(
        key_func=get_remote_address,
        application_limits=[f"{rate}/second"],
        strategy=buckets.STRATEGY_NAME,
        storage_uri=buckets.SCHEME_PREFIX + url,
        storage_options={
            "burst": burst,
            "key_prefix": f"{app.config['REDIS_PREFIX']}ratelimit",
            # Share the app's client pool (bounded timeouts) instead of a second one.
            "connection_pool": redis_client.connect(url).connection_pool,
        },
        headers_enabled=False,  # ours carry the bucket's meaning; see _add_headers
        on_breach=_on_breach,
        swallow_errors=False,
    )
    limiter.init_app(app)
    app.extensions[EXTENSION] = limiter
    return limiter
