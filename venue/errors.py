"""Venue exceptions, shaped like httpx's tree; services/errors.py maps them once.

    VenueError
    ├── VenueUnavailable        timeouts, connection errors, 5xx, 429 (.retry_after)
    │   ├── VenueTimeout
    │   └── VenueRateLimited    429: the venue refused before acting (safe to resend)
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


class VenueRateLimited(VenueUnavailable):
    """429: over the venue's quota; nothing was done, so even a submit may be resent."""


class VenueNotFound(VenueError):
    """The venue does not know the market, token or order."""


class VenueRejected(VenueError):
    """The venue refused the request (4xx); ``body`` holds its answer."""

    def __init__(self, message: str, *, status: int = 400, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
