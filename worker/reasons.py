"""Why a job failed, in words safe to keep in Redis for operators to read.

Exception messages from HTTP and RPC clients can quote URLs with credentials,
bearer tokens or keys; the stored reason masks those before it leaves the process.
"""

from __future__ import annotations

import re
import traceback

MAX_REASON_CHARS = 4000

_REDACTIONS: list[tuple[re.Pattern[str], str]] = [
    # scheme://user:password@host -> scheme://***@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+(?::[^/\s@]*)?@"), r"\1***@"),
    # query-string secrets: ?api_key=..., &token=...
    (re.compile(r"(?i)([?&](?:[a-z_-]*key|[a-z_-]*token|secret|password|signature|sig)=)"
                r"[^&\s'\"]+"), r"\1***"),
    # header-style secrets: Authorization: Bearer ..., POLY_API_KEY: ...
    (re.compile(r"(?i)\b(authorization|bearer|poly_[a-z_]+|api[_-]?key|secret|passphrase"
                r"|password|private[_-]?key)(['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]+"), r"\1\2***"),
    # 32-byte hex blobs (private keys, secrets); 20-byte addresses stay readable.
    (re.compile(r"\b(0x)?[0-9a-fA-F]{64}\b"), "<redacted-hex>"),
]


def redact(text: str) -> str:
    """``text`` with credentials, tokens and private keys masked."""
    for pattern, replacement in _REDACTIONS:
        text = pattern.sub(replacement, text)
    return text


def describe(exc: BaseException) -> str:
    """``Type: message`` then the traceback, redacted and bounded in size."""
    headline = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    trace = "".join(traceback.format_exception(exc))
    text = redact(f"{headline}\n\n{trace}")
    if len(text) > MAX_REASON_CHARS:
        text = text[:MAX_REASON_CHARS] + "\n[truncated]"
    return text


def timed_out(seconds: float) -> str:
    """The reason stored for a job the worker gave up on at its timeout."""
    return f"JobTimeout: timed out after {seconds:g}s (the worker abandoned the job)"
