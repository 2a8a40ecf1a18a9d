"""The one error handler: every failure becomes ``{error, code}`` with its status.

Domain errors carry their own code and status; werkzeug's HTTP errors,
webargs validation errors, and transport errors from the venue, the chain,
the database and Redis are translated here, once. No stack trace leaves.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from services.platform import errors

log = logging.getLogger(__name__)

# werkzeug status -> the error raised in its place
_HTTP_ERRORS: dict[int, type[errors.CopytradeError]] = {
    400: errors.BadRequest,
    401: errors.Unauthorized,
    403: errors.Forbidden,
    404: errors.NotFound,
    422: errors.ValidationFailed,
    429: errors.RateLimited,
}

_HTTP_MESSAGES = {
    404: "No such resource.",
    405: "Method not allowed for this resource.",
    413: "Request body too large.",
    415: "Unsupported media type: send application/json.",
}


def from_http_exception(exc: HTTPException) -> errors.CopytradeError:
    """The domain error standing for a werkzeug/webargs HTTP exception."""
    status = exc.code or 500
    data = getattr(exc, "data", None) or {}
    messages = data.get("messages") or data.get("errors")
    if messages is not None:
        # webargs nests by location ({"json": {...}}); clients want the fields.
        fields = messages
        if isinstance(messages, dict) and len(messages) == 1:
            (location, inner), = messages.items()
            if location in ("json", "query", "form", "headers", "view_args", "path"):
                fields = inner
        if isinstance(fields, dict) and list(fields) == ["_schema"]:
            return errors.BadRequest(_first_message(fields["_schema"]))
        if _is_bad_json(fields):
            return errors.BadRequest("The request body is not valid JSON.")
        return errors.ValidationFailed(_summary(fields), fields=fields)
    cls = _HTTP_ERRORS.get(status)
    if cls is not None:
        err = cls(_HTTP_MESSAGES.get(status) or exc.description)
    elif status >= 500:
        err = errors.InternalError()
    else:
        err = errors.BadRequest(_HTTP_MESSAGES.get(status) or exc.description)
    err.status = status
    if exc.response is None and hasattr(exc, "get_headers"):
        for name, value in exc.get_headers():
            if name.lower() == "allow":
                err.headers["Allow"] = value
    return err


def _first_message(value: Any) -> str:
    while isinstance(value, list | dict) and value:
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
    return str(value) if value else "Bad request."


def _is_bad_json(fields: Any) -> bool:
    return isinstance(fields, list | dict) and "Invalid JSON body." in str(fields)


def _summary(fields: Any) -> str:
    if isinstance(fields, dict) and fields:
        names = ", ".join(sorted(str(k) for k in fields))
        return f"Validation failed: {names}."
    return "Validation failed."


def to_response(err: errors.CopytradeError) -> Response:
    """Render a domain error as JSON with its status and headers."""
    response = jsonify(err.to_dict())
    response.status_code = err.status
    for name, value in err.headers.items():
        response.headers[name] = value
    if err.retry_after is not None:
        response.headers["Retry-After"] = str(int(err.retry_after))
    return response


def handle(exc: BaseException) -> Response:
    """Turn any exception into the error shape; unknown ones are logged and hidden."""
    if isinstance(exc, HTTPException):
        original = getattr(exc, "original_exception", None)
        if exc.code == 500 and original is not None:
            return handle(original)
        err = from_http_exception(exc)
    else:
        err = errors.from_external(exc)
        if err is None:
            log.exception("unhandled error on %s %s", request.method, request.path)
            err = errors.InternalError()
        elif err.status >= 500:
            log.warning("%s on %s %s: %r", err.code, request.method, request.path, exc)
    return render(err)


def render(err: errors.CopytradeError) -> Response:
    """The response for ``err``: JSON, or an htmx partial where the dashboard registers one."""
    renderer = _renderers.get("htmx")
    if renderer is not None and request.headers.get("HX-Request"):
        return renderer(err)
    return to_response(err)


_renderers: dict[str, Any] = {}


def register_renderer(kind: str, renderer: Any) -> None:
    """Let a surface (the dashboard) render errors its own way for its own requests."""
    _renderers[kind] = renderer


def register(app: Flask) -> None:
    """Install the handler for every exception on ``app``."""
    app.register_error_handler(errors.CopytradeError, handle)
    app.register_error_handler(HTTPException, handle)
    app.register_error_handler(Exception, handle)
