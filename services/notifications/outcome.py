"""How one send went (every transport answers one), and how our requests name themselves."""

from __future__ import annotations

from dataclasses import dataclass

USER_AGENT = "copytrade-notifications/1"


@dataclass(frozen=True)
class Outcome:
    """How a send went: delivered, or why not; ``gone``: the receiver asked never again."""

    ok: bool
    status_code: int | None = None
    error: str | None = None
    gone: bool = False
    permanent: bool = False  # retrying cannot help (no SMTP server configured, say)
    latency_ms: int = 0
