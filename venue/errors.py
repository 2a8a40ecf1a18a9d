"""Venue exceptions, shaped like httpx's tree; services/platform/errors.py maps them once.

    VenueError
    ├── VenueUnavailable        timeouts, connection errors, 5xx, 429 (.retry_after)
    │   ├── VenueTimeout
    │   └── VenueRestricted     425 restart, 503 post-only/cancel-only/disabled (.mode):
    │       │                   refused, never placed
    │       └── VenueRateLimited  429: over the quota; nothing was done (safe to resend)
    ├── VenueNotFound           404 for an unknown market, token or order
    └── VenueRejected           4xx: the venue understood and refused (.status, .body)
"""

from __future__ import annotations

from typing import Any


class VenueError(Exception):
    """Base of every venue failure."""


class VenueUnavailable(VenueError):
    """The venue could not answer; safe to retry later."""

    def __init__(self, message: str = "venue unavailable", *, retry_after: int = 5) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class VenueTimeout(VenueUnavailable):
    """The venue did not answer in time."""


class VenueRestricted(VenueUnavailable):
    """The venue refused because it is restarting or in a restricted mode (``mode``).

    Unlike other 5xx answers, the request was certainly not carried out.
    """

    def __init__(self, message: str, *, mode: str, retry_after: int = 5) -> None:
        super().__init__(message, retry_after=retry_after)
        self.mode = mode


class VenueRateLimited(VenueRestricted):
    """429: over the venue's quota; nothing was done, so even a submit may be resent."""


class VenueNotFound(VenueError):
    """The venue does not know the market, token or order."""


class VenueRejected(VenueError):
    """The venue refused the request (4xx); ``body`` holds its answer."""

    def __init__(self, message: str, *, status: int = 400, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
