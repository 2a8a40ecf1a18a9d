"""JSON answers write every moment as ISO 8601 in UTC.

Schemas' DateTime fields already do; this covers what reaches the encoder as a Python
``datetime`` inside a free-form object (a preview's ``target``, a readiness ``account``, an
event's ``data``, an MCP tool's result), which Flask's default provider would write as an
HTTP date ("Fri, 27 Nov 2026 16:02:33 GMT").
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from flask.json.provider import DefaultJSONProvider


def iso_utc(moment: datetime) -> str:
    """``moment`` in ISO 8601 at UTC (``+00:00``); a naive one is taken as UTC already."""
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return aware.isoformat()


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso_utc(value)
    if isinstance(value, date):
        return value.isoformat()
    return DefaultJSONProvider.default(value)


class IsoJSONProvider(DefaultJSONProvider):
    """Flask's JSON provider with moments in ISO 8601 UTC instead of HTTP dates."""

    default = staticmethod(_default)  # type: ignore[assignment]
