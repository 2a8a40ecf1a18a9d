"""What every REST blueprint shares: the Blueprint class and documented error responses."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import wraps
from typing import Any

import flask_smorest
from flask import current_app
from flask.globals import app_ctx
from flask_smorest.utils import (
    resolve_schema_instance,
    set_status_and_headers_in_response,
    unpack_tuple_response,
)
from webargs.flaskparser import FlaskParser
from werkzeug import Response

from schemas.common import ErrorSchema
from schemas.dump import compiled
from schemas.fields import DECIMAL_PATTERN

DecimalStringComponent = {
    "type": "string",
    "pattern": DECIMAL_PATTERN,
    "description": "A decimal number as a string. Parse as a decimal, never a float.",
    "examples": ["12.5"],
}

SECURITY_SCHEMES = {
    "sessionJWT": {
        "type": "http", "scheme": "bearer", "bearerFormat": "JWT",
        "description": "Session token from /api/auth/verify-code; full account scope, 24 hours.",
    },
    "apiKey": {
        "type": "http", "scheme": "bearer", "bearerFormat": "svck_live_...",
        "description": "API key (`svck_live_...`) minted at POST /api/keys; carries scopes.",
    },
    "oauth": {
        "type": "http", "scheme": "bearer", "bearerFormat": "svco_...",
        "description": "OAuth 2.1 access token (`svco_...`) for hosted agents; carries scopes.",
    },
}

_RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait before retrying.",
                                "schema": {"type": "integer"}}}

ERROR_DESCRIPTIONS = {
    400: "Bad request or validation failed (`bad_request`, `validation_failed`).",
    401: "Missing credential (`unauthorized`) or invalid/expired one (`invalid_token`).",
    402: "Payment required (`insufficient_balance`).",
    403: "Credential lacks a scope (`scope_required`) or tier (`tier_limit_exceeded`).",
    404: "Not found (`not_found`).",
    409: "A request with this Idempotency-Key is in progress (`bad_request`).",
    429: "Rate limited (`rate_limited`).",
    500: "Internal error (`internal_error`, `crypto_error`, `wallet_error`).",
    503: "A dependency is down (`polymarket_unavailable`, `database_error`, `cache_error`, "
         "`wallet_error` for the chain RPC).",
}


class ArgumentsParser(FlaskParser):
    """webargs parser answering 400, not 422, on invalid input."""

    DEFAULT_VALIDATION_STATUS = 400


class Blueprint(flask_smorest.Blueprint):
    """A smorest Blueprint that parses with our parser and documents errors briefly."""

    ARGUMENTS_PARSER = ArgumentsParser()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._prepare_doc_cbks.append(merge_extra_doc)

    def response(self, status_code: Any, schema: Any = None, **kwargs: Any) -> Callable[[Any], Any]:
        """smorest's response, dumping with the schema's compiled dump when it is plain."""
        # The instance smorest documents is the one it dumps with: the OpenAPI is unchanged.
        schema = compiled(resolve_schema_instance(schema))
        documenting = super().response(status_code, schema, **kwargs)
        prepare = self._prepare_response_content

        def decorator(func: Any) -> Any:
            documented = documenting(func)
            if inspect.iscoroutinefunction(func):
                return documented  # smorest's wrapper runs it through Flask's async bridge

            # smorest's wrapper, step for step, for a plain function: it asked Flask for a
            # sync version of ``func`` and looked up the app and ``g`` through their proxies
            # on every call.
            @wraps(func)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                result_raw, r_status_code, r_headers = unpack_tuple_response(func(*args, **kwargs))
                if isinstance(result_raw, Response):
                    set_status_and_headers_in_response(result_raw, r_status_code, r_headers)
                    return result_raw
                result_dump = result_raw if schema is None else schema.dump(result_raw)
                app = current_app._get_current_object()  # type: ignore[attr-defined]
                # kept where smorest keeps it (its ETag support reads it)
                app_ctx._get_current_object().g.setdefault(  # type: ignore[attr-defined]
                    "_flask_smorest", {})["result_dump"] = result_dump
                resp = app.json.response(prepare(result_dump))
                set_status_and_headers_in_response(resp, r_status_code, r_headers)
                if r_status_code is None:
                    resp.status_code = status_code
                return resp

            wrapper._apidoc = documented._apidoc  # type: ignore[attr-defined]
            return wrapper

        return decorator

    def errors(self, *statuses: int) -> Callable[[Any], Any]:
        """Document the error responses a route may give, with the Error body."""

        def decorator(func: Any) -> Any:
            documented = func
            for status in statuses:
                headers = _RETRY_AFTER if status in (409, 429, 503) else None
                documented = self.alt_response(
                    status, schema=ErrorSchema, description=ERROR_DESCRIPTIONS.get(status),
                    headers=headers,
                )(documented)
            if inspect.iscoroutinefunction(func) or documented is func:
                return documented
            # smorest's alt_response wraps once per status, each layer only passing the
            # call on through Flask's sync check: one plain layer carries all their docs.

            @wraps(func)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                return func(*args, **kwargs)

            wrapper._apidoc = documented._apidoc  # type: ignore[attr-defined]
            return wrapper

        return decorator


# Headers every response carries (blueprints/ratelimit.py); referenced from each response.
RATE_LIMIT_HEADERS = {
    "X-RateLimit-Limit": {
        "description": "Capacity of the caller's token bucket (the burst: 500 by default).",
        "schema": {"type": "integer"}},
    "X-RateLimit-Remaining": {
        "description": "Requests the bucket admits right now; it refills at the sustained "
                       "rate (60 per second by default).",
        "schema": {"type": "integer"}},
    "X-RateLimit-Reset": {
        "description": "Unix time (seconds) at which the bucket is full again.",
        "schema": {"type": "integer"}},
}


def merge_extra_doc(doc: dict[str, Any], doc_info: dict[str, Any], **_: Any) -> dict[str, Any]:
    """Merge OpenAPI fragments left by decorators outside smorest (access, idempotency).

    Fragments may carry ``security``, ``parameters`` (appended), ``responses`` (added
    when absent), ``success_headers`` (added to 2xx responses), ``notes`` (appended
    to the description) and ``extensions`` (``x-...`` keys). Every response also
    references the rate-limit headers.
    """
    notes: list[str] = []
    responses = doc.setdefault("responses", {})
    for fragment in doc_info.get("extra_doc", []):
        if "security" in fragment:
            doc["security"] = fragment["security"]
        doc.setdefault("parameters", []).extend(fragment.get("parameters", []))
        if not doc["parameters"]:
            del doc["parameters"]
        for status, response in fragment.get("responses", {}).items():
            if status not in responses and str(status) not in responses:
                responses[str(status)] = response
        for status, response in responses.items():
            if isinstance(response, dict) and str(status).startswith("2"):
                response.setdefault("headers", {}).update(fragment.get("success_headers", {}))
        notes.extend(fragment.get("notes", []))
        doc.update(fragment.get("extensions", {}))
    for response in responses.values():
        if not isinstance(response, dict):
            continue  # a reference to a shared response component
        headers = response.setdefault("headers", {})
        for name in RATE_LIMIT_HEADERS:
            headers.setdefault(name, {"$ref": f"#/components/headers/{name}"})
    if notes:
        docstring = doc_info.setdefault("docstring", {})
        docstring["description"] = "\n\n".join(
            [part for part in (docstring.get("description"),) if part] + notes)
    return doc

