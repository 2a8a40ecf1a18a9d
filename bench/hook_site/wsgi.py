"""The product with the rate-limit hook it had before flask-limiter came back, for
bench/api_throughput.py's side-by-side rounds only.

Run from this folder (the bench does), this module shadows the product's ``wsgi`` so
``copytrade serve`` loads it: the app is built without its limiter, and one before-request
hook takes a token from the same GCRA bucket (one Lua call, one round trip) and sets the
same headers, as blueprints/ratelimit.py did until flask-limiter replaced it.
"""

from __future__ import annotations

import math
import time

from flask import Response, g, request

from app import create_app
from blueprints import ratelimit
from services.platform import errors, metrics, redis_client
from services.platform import ratelimit as buckets
from services.platform.runtime import runtime

app = create_app({"RATE_LIMIT_ENABLED": False})
_built = runtime()
_storage = buckets.TokenBucketRedisStorage(
    buckets.SCHEME_PREFIX + _built.redis_url,
    connection_pool=redis_client.connect(_built.redis_url).connection_pool,
    key_prefix=f"{_built.settings.redis_prefix}ratelimit-hook")
_RATE = float(_built.settings.rate_limit_per_second)
_CAPACITY = int(_built.settings.rate_limit_burst)


def _take() -> None:
    endpoint = request.endpoint
    if not endpoint or endpoint.rsplit(".", 1)[-1] == "static":
        return
    state = _storage.take(request.remote_addr or "127.0.0.1", _RATE, _CAPACITY)
    g.setdefault("rate_limit_state", state)
    if not state.allowed:
        metrics.rate_limit_rejected()
        raise errors.RateLimited("Too many requests from this address; slow down.",
                                 retry_after=state.retry_after_seconds)


def _add_headers(response: Response) -> Response:
    state = g.get("rate_limit_state")
    if state is None or not state.known:
        return response
    response.headers["X-RateLimit-Limit"] = str(state.capacity)
    response.headers["X-RateLimit-Remaining"] = str(state.remaining)
    response.headers["X-RateLimit-Reset"] = str(math.ceil(time.time() + state.full_in))
    return response


def _hook_answered() -> bool:
    state = g.get("rate_limit_state")
    return state is not None and state.known


# First, as the product's limiter is (before the access gate).
app.before_request_funcs.setdefault(None, []).insert(0, _take)
app.after_request(_add_headers)
# /healthz skips its own Redis ping when the limiter's token came from Redis: same here.
ratelimit.redis_answered = _hook_answered
