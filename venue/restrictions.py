"""Matching-engine restarts and restricted trading modes, as the venue announces them.

ACCOUNTS.md §7.4: a restart answers HTTP 425 on every order-related endpoint (honour
``Retry-After``, else back off exponentially from 1-2 s, capped at 30 s); post-only,
cancel-only and disabled modes answer 503 with their own texts; throttling beyond the
budget answers 429. Each way the order was refused, never placed: it is safe to send
again once the venue reopens.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

RESTARTING = "restarting"
POST_ONLY = "post_only"
CANCEL_ONLY = "cancel_only"
DISABLED = "disabled"
RATE_LIMITED = "rate_limited"  # 429 Too Many Requests: refused before reaching the engine

BACKOFF_CAP = 30.0  # seconds (the venue's docs)

# What each mode's 503 says (the venue's texts and code).
_MARKERS = (
    (POST_ONLY, "post-only mode"),
    (CANCEL_ONLY, "cancel-only"),
    (DISABLED, "trading is currently disabled"),
)


def restricted_mode(status: int, body: Any) -> str | None:
    """The restricted mode an error answer announces (425, 429, the modes' 503), or None."""
    if status == 425:
        return RESTARTING
    if status == 429:
        return RATE_LIMITED
    if status != 503:
        return None
    if isinstance(body, Mapping):
        if body.get("code") == "post_only_mode":
            return POST_ONLY
        text = str(body.get("error") or body.get("errorMsg") or "")
    else:
        text = str(body or "")
    lowered = text.lower()
    for mode, marker in _MARKERS:
        if marker in lowered:
            return mode
    return None


def body_retry_after(body: Any) -> int | None:
    """``retry_after_seconds`` from a restricted mode's body, when it gives one."""
    if isinstance(body, Mapping):
        value = body.get("retry_after_seconds")
        if isinstance(value, int) and value >= 0:
            return value
        if isinstance(value, str) and value.isdigit():
            return int(value)
    return None


def restart_backoff(attempt: int, retry_after: int | None = None,
                    cap: float = BACKOFF_CAP) -> float:
    """Seconds before retry ``attempt`` (1-based): Retry-After, else 1-2 s doubling, capped."""
    if retry_after is not None:
        return float(min(retry_after, cap)) if retry_after > 0 else 0.0
    return min(cap, random.uniform(1.0, 2.0) * 2 ** (attempt - 1))
