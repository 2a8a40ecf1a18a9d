"""Small helpers shared by the sandbox's HTTP views: JSON answers and query parsing."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from flask import Response, request

from devstack.venue.jsonenc import dumps


def json_response(payload: object, status: int = 200) -> Response:
    """A JSON answer; Decimals become number tokens."""
    return Response(dumps(payload), status=status, mimetype="application/json")


def error_response(message: str, status: int = 400) -> Response:
    """The venue's error shape: {"error": message}."""
    return json_response({"error": message}, status)


def query_list(name: str) -> list[str]:
    """Values of a query parameter given repeated or comma-separated."""
    values: list[str] = []
    for raw in request.args.getlist(name):
        values.extend(v.strip() for v in raw.split(",") if v.strip())
    return values


def query_bool(name: str) -> bool | None:
    """A true/false query parameter, None when absent."""
    raw = request.args.get(name)
    if raw is None or raw == "":
        return None
    return raw.strip().lower() in ("1", "true", "yes")


def query_int(name: str, default: int, *, low: int = 0, high: int | None = None) -> int:
    """An integer query parameter clamped to [low, high]; `default` when absent or bad."""
    try:
        value = int(request.args.get(name, default))
    except (TypeError, ValueError):
        value = default
    value = max(low, value)
    return min(value, high) if high is not None else value


def query_decimal(name: str) -> Decimal | None:
    """A decimal query parameter, None when absent or bad."""
    raw = request.args.get(name)
    if raw in (None, ""):
        return None
    try:
        return Decimal(raw)
    except InvalidOperation:
        return None


def poly_headers() -> dict[str, str]:
    """The POLY_* auth headers, read from the WSGI environ (they contain underscores)."""
    found: dict[str, str] = {}
    for key, value in request.environ.items():
        if key.startswith("HTTP_POLY_"):
            found[key[5:]] = value
    return found
