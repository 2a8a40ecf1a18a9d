"""The Idempotency-Key header on REST writes: a thin decorator over
services/platform/idempotency.py.

Put ``@idempotent`` between the access policy and smorest's decorators::

    @access.requires("trade:execute")
    @idempotent
    @blp.arguments(PlaceOrderRequest)
    @blp.response(200, PlaceOrderResponse)
    def post(self, body): ...

Without the header the view runs as usual. With it, the request (method, route,
path and query arguments, JSON body) runs once per user and key for 24 hours;
a replay answers the first status and body with ``Idempotent-Replay: true``.
A write that cannot use a key (its body holds a one-time secret) says so with
``@idempotency_exempt(reason)``; a test fails on writes that do neither.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import Response, current_app, jsonify, request

from blueprints.access import add_doc, current_principal
from services.platform import idempotency

F = TypeVar("F", bound=Callable[..., Any])

REPLAY_HEADER = "Idempotent-Replay"

HEADER_PARAMETER = {
    "in": "header", "name": idempotency.HEADER, "required": False,
    "schema": {"type": "string", "format": "uuid"},
    "description": (
        "Optional. A UUID naming this write. Re-sending the same key (same user) within "
        "24 hours returns the first response without running the write again, with "
        "`Idempotent-Replay: true`. While the first request still runs, a duplicate gets "
        "409 (`bad_request`, Retry-After). The same key with a different route or body "
        "gets 400 `bad_request`; a non-UUID key 400 `validation_failed`. If the "
        "idempotency store is down, keyed requests are refused with 503 `cache_error`. "
        "5xx answers are not kept, so a retry runs again."),
}
REPLAY_RESPONSE_HEADER = {
    REPLAY_HEADER: {"description": "`true` when this is the saved response of an earlier "
                                   "request with the same Idempotency-Key.",
                    "schema": {"type": "string", "enum": ["true"]}},
}


def _request_body() -> Any:
    raw = request.get_data(cache=True)
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def request_fingerprint() -> str:
    """What this request asks for: method, route, path/query arguments and JSON body."""
    rule = request.url_rule.rule if request.url_rule else request.path
    return idempotency.fingerprint(
        request.method, rule, {k: str(v) for k, v in (request.view_args or {}).items()},
        sorted(request.args.items(multi=True)), _request_body())


def idempotent(func: F) -> F:
    """Honour the Idempotency-Key header on a state-changing route."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        raw_key = request.headers.get(idempotency.HEADER)
        if raw_key is None:
            return func(*args, **kwargs)
        key = idempotency.parse_key(raw_key)
        principal = current_principal()
        first: list[Response] = []

        def run() -> tuple[int, Any]:
            response = current_app.make_response(func(*args, **kwargs))
            first.append(response)
            body = response.get_json(silent=True) if response.get_data() else None
            return response.status_code, body

        outcome = idempotency.run_once(principal.user_id, key, request_fingerprint(), run)
        if first:
            return first[0]
        replay = jsonify(outcome.body) if outcome.body is not None else Response(status=204)
        replay.status_code = outcome.status
        replay.headers[REPLAY_HEADER] = "true"
        return replay

    wrapper._idempotency = "keyed"  # type: ignore[attr-defined]
    add_doc(wrapper, {"parameters": [HEADER_PARAMETER],
                       "success_headers": REPLAY_RESPONSE_HEADER})
    return wrapper  # type: ignore[return-value]


def idempotency_exempt(reason: str) -> Callable[[F], F]:
    """Declare a write that takes no Idempotency-Key, and say why in its OpenAPI description."""

    def decorator(func: F) -> F:
        func._idempotency = "exempt"  # type: ignore[attr-defined]
        add_doc(func, {"notes": [f"**Idempotency-Key:** not accepted: {reason}"]})
        return func

    return decorator


def mode_of(view: Any) -> str | None:
    """``"keyed"``, ``"exempt"`` or None (undeclared) for a view function or method."""
    return getattr(view, "_idempotency", None)
