"""The wire every channel kind sends over: the ``Message`` one delivery says, and a POST to a
user-given URL (webhooks, Discord, Slack) through the guarded outbound client
(services/platform/outbound.py): no private addresses, a wall-clock deadline, a size cap.
It returns an Outcome and never raises for the receiver's faults (retrying is the caller's
business, services/notifications/deliveries.py). What each kind puts on the wire is its
provider's (services/notifications/providers/).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from services.notifications import urls
from services.notifications.outcome import USER_AGENT, Outcome
from services.platform import outbound
from services.platform.runtime import runtime

__all__ = ["JSON_HEADERS", "MAX_ANSWER_BYTES", "Message", "Outcome", "post", "since"]

MAX_ANSWER_BYTES = 64 * 1024
JSON_HEADERS = {"content-type": "application/json", "user-agent": USER_AGENT}


@dataclass(frozen=True)
class Message:
    """What one delivery says: the same title and text on every channel."""

    id: str  # webhook-id: the same across retries
    type: str
    title: str
    text: str
    created_at: datetime
    link: str | None = None
    data: dict[str, Any] = field(default_factory=dict)  # the envelope payload (machines)
    unsubscribe_url: str | None = None


def since(started: float) -> int:
    """Milliseconds since ``started`` (a ``time.monotonic()`` reading)."""
    return int((time.monotonic() - started) * 1000)


def post(url: str, body: bytes, headers: dict[str, str]) -> Outcome:
    """POST ``body`` to a user-given ``url`` through the guarded client; a refused address is
    permanent, a 410 is gone."""
    config = runtime().settings.notifications
    started = time.monotonic()
    try:
        answer = outbound.fetch(url, method="POST", content=body, headers=headers,
                                deadline_seconds=config.send_deadline_seconds,
                                max_bytes=MAX_ANSWER_BYTES, allow=urls.address_rule(url, config))
    except outbound.Refused as exc:
        return Outcome(False, error=str(exc)[:300], permanent=True, latency_ms=since(started))
    except outbound.FetchError as exc:
        return Outcome(False, error=str(exc)[:300], latency_ms=since(started))
    latency = since(started)
    if 200 <= answer.status < 300:
        return Outcome(True, answer.status, latency_ms=latency)
    return Outcome(False, answer.status, error=f"the receiver answered {answer.status}",
                   gone=answer.status == 410, latency_ms=latency)
