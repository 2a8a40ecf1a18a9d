"""Structured logs: one JSON object per line, correlation ids, and secrets masked on the way out.

- ``configure()`` (``copytrade serve``/``worker``/``up``) puts one handler on the root
  logger: JSON lines on stderr (``LOG_FORMAT=text`` for a human-readable line) with the
  ``RedactionFilter`` attached, so every record from every library passes through it.
- ``request_id`` and ``job_id`` are context variables: the web sets the request's (from
  ``X-Request-Id`` or a new one), ``services.platform.jobs.enqueue`` copies it into the job's meta,
  the worker sets both while the job runs. Every line carries the ids in force.
- Nothing secret is logged on purpose; the filter is the safety net for what slips
  through (an exception quoting a URL with a password, a header dump): bearer tokens,
  JWTs, ``svck_``/``svco_`` credentials, 32-byte hex keys, ``key=``/``secret=`` values,
  URL passwords and sign-in codes are masked, and so are the path, query and userinfo of
  the configured RPC URL (and of venue URLs carrying credentials): ``protect_urls``.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from chain.urls import scrub

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("copytrade_request_id",
                                                                       default=None)
job_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("copytrade_job_id",
                                                                   default=None)

REQUEST_ID_HEADER = "X-Request-Id"
_REQUEST_ID_OK = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

MASK = "***"

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]*(?::[^/\s@]*)?@"), r"\1***@"),
    # JSON Web Tokens (sessions, OAuth id tokens): header.payload.signature
    (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), "<redacted-jwt>"),
    # our own credentials: API keys (svck_live_...), OAuth tokens (svco_...), any svc?_
    (re.compile(r"\b(svc[a-z]_)[A-Za-z0-9_-]{6,}"), r"\1***"),
    # Authorization: Bearer <anything>
    (re.compile(r"(?i)\b(bearer\s+)[^\s'\",;]+"), r"\1***"),
    # query-string and form secrets: ?api_key=..., &token=..., code=...
    (re.compile(r"(?i)([?&;](?:[a-z_-]*key|[a-z_-]*token|secret|password|passphrase|signature"
                r"|sig|code)=)[^&\s'\"]+"), r"\1***"),
    # key: value / key=value pairs whose name says secret (headers, dict reprs, kwargs)
    (re.compile(r"(?i)\b(authorization|poly_[a-z_]+|api[_-]?key|api[_-]?secret|secret"
                r"|passphrase|password|private[_-]?key|access[_-]?token|refresh[_-]?token"
                r"|client[_-]?secret)(['\"]?\s*[:=]\s*['\"]?)(?!\*\*\*)[^\s'\",}]+"),
     r"\1\2***"),
    # 32-byte hex blobs (private keys, HMAC secrets); 20-byte addresses stay readable
    (re.compile(r"\b(0x)?[0-9a-fA-F]{64}\b"), "<redacted-hex>"),
    # long base64 blobs (venue API secrets, sealed keys)
    # (mixed case and digits, so long job ids and slugs stay readable)
    (re.compile(r"(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*[A-Z])(?=[A-Za-z0-9_-]*[a-z])"
                r"(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{40,}={0,2}"), "<redacted-blob>"),
    # RPC provider keys in the path: https://polygon-mainnet.g.alchemy.com/v2/<key>
    (re.compile(r"(?i)\b(https?://[^/\s]+/v[0-9]+/)[A-Za-z0-9_-]{16,}"), r"\1***"),
    # six-digit sign-in codes where they are named as such
    (re.compile(r"(?i)(\bcode\b[^0-9\n]{0,40})\b\d{6}\b"), r"\1******"),
]

# What some pattern above needs in the text (each one's literal, or a long token run): a
# line without any of these (most request lines) is clean, and skips the patterns.
_MAYBE_SECRET = re.compile(r"://|eyJ|svc|(?i:bearer|code)|[:=]|[A-Za-z0-9_-]{40}")

# The one deliberate exception, fixed by ARCHITECTURE.md: with no SMTP_URL (a laptop run)
# the sign-in code is logged so the person at the keyboard can sign in. Production sets
# SMTP_URL and then the code is never logged; this message only exists without it.
DEV_SIGNIN_NOTICE = ("services.identity.auth", "SMTP_URL is not set; sign-in code for ")


# Endpoint URLs whose path, query or userinfo may be a credential (see protect_urls).
_protected_urls: set[str] = set()


def protect_urls(*urls: str | None) -> None:
    """Mask these URLs' credential-bearing parts in every log line from now on."""
    _protected_urls.update(url for url in urls if url)


def redact(text: str) -> str:
    """``text`` with credentials, tokens, keys and codes masked."""
    for url in sorted(_protected_urls, key=len, reverse=True):
        text = scrub(text, url)
    if not _MAYBE_SECRET.search(text):
        return text
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RedactionFilter(logging.Filter):
    """Mask secrets in the rendered message and exception text of every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record in place (message pre-rendered) and always let it through."""
        if (record.name, str(record.msg)[:len(DEV_SIGNIN_NOTICE[1])]) == DEV_SIGNIN_NOTICE:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep what we can
            message = str(record.msg)
        record.msg = redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
            record.exc_info = None  # the text above is what gets printed
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        for name, value in list(record.__dict__.items()):
            if name not in _STANDARD and isinstance(value, str):
                setattr(record, name, redact(value))
        return True


class ContextFilter(logging.Filter):
    """Stamp the request and job ids in force on each record."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Add ``request_id``/``job_id`` unless the record already names them."""
        if getattr(record, "request_id", None) is None:
            record.request_id = request_id.get()
        if getattr(record, "job_id", None) is None:
            record.job_id = job_id.get()
        return True


_STANDARD = set(logging.LogRecord("x", 0, "x", 0, "x", None, None).__dict__) | {
    "message", "asctime", "request_id", "job_id"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, ids, extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as a single JSON line."""
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in ("request_id", "job_id"):
            value = getattr(record, name, None)
            if value:
                entry[name] = value
        for name, value in record.__dict__.items():
            if name not in _STANDARD and not name.startswith("_"):
                entry[name] = value if isinstance(value, int | float | bool | type(None)) \
                    else str(value)
        if record.exc_text or record.exc_info:
            entry["exception"] = record.exc_text or self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def _sole_json_handler(logger: logging.Logger, level: int) -> logging.StreamHandler | None:
    """The handler ``configure`` installed when a record of ``logger`` at ``level`` would reach
    it and nothing else: no other handler or filter on the way, JSON and our two filters."""
    found: Any = None
    current: logging.Logger | None = logger
    while current is not None:
        if current.filters:
            return None
        for handler in current.handlers:
            if found is not None or not getattr(handler, "_copytrade", False):
                return None
            found = handler
        if not current.propagate:
            break
        current = current.parent
    if (found is None or level < found.level or len(found.filters) != 2
            or type(found.formatter) is not JsonFormatter):
        return None
    return found


def write_line(logger: logging.Logger, level: int, message: str, fields: dict[str, Any]) -> bool:
    """Write what ``logger.log(level, message, extra=fields)`` would, without a log record,
    when the line's only way out is ``configure``'s JSON handler and no field needs masking
    (a request's line, on every request); False when the caller must log it as usual."""
    if not logger.isEnabledFor(level):
        return True
    handler = _sole_json_handler(logger, level)
    if handler is None:
        return False
    texts = [message, *(value for value in fields.values() if isinstance(value, str))]
    joined = "\n".join(texts)
    if redact(joined) != joined:  # something to mask: the filter's way, field by field
        return False
    entry: dict[str, Any] = {
        "ts": datetime.fromtimestamp(time.time(), UTC).isoformat(timespec="milliseconds"),
        "level": logging.getLevelName(level).lower(), "logger": logger.name,
        "message": message}
    for name, variable in (("request_id", request_id), ("job_id", job_id)):
        value = variable.get()
        if value:
            entry[name] = value
    for name, value in fields.items():
        entry[name] = value if isinstance(value, int | float | bool | type(None)) else str(value)
    line = json.dumps(entry, default=str) + handler.terminator
    with handler.lock:  # type: ignore[union-attr]
        try:
            handler.stream.write(line)
            handler.flush()
        except Exception:  # as StreamHandler.emit: report and go on
            handler.handleError(logging.makeLogRecord({"msg": message}))
    return True


def build_handler(stream: Any = None, fmt: str | None = None) -> logging.Handler:
    """A handler with our filters: JSON lines (or text) on ``stream`` (default stderr)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    return install_filters(handler, fmt)


class TextFormatter(logging.Formatter):
    """A line for a person at a terminal: time, level, logger, message, then the ids in force."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        """The record as text, with ``[request …]``/``[job …]`` only when one is set."""
        text = super().format(record)
        ids = [f"{kind} {value}" for kind, value in (("request", record.__dict__.get(
            "request_id")), ("job", record.__dict__.get("job_id"))) if value]
        return f"{text} [{', '.join(ids)}]" if ids else text


def install_filters(handler: logging.Handler, fmt: str | None = None) -> logging.Handler:
    """Give ``handler`` the context and redaction filters and our formatter."""
    handler.addFilter(ContextFilter())
    handler.addFilter(RedactionFilter())
    chosen = (fmt or "json").lower()
    handler.setFormatter(JsonFormatter() if chosen == "json" else TextFormatter())
    return handler


def configure(level: str | int | None = None, fmt: str | None = None) -> logging.Handler:
    """Route every log record through one redacting handler on the root logger.

    ``level`` and ``fmt`` are Settings' LOG_LEVEL and LOG_FORMAT (default INFO, json).
    """
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_copytrade", False)]:
        root.removeHandler(old)
    handler = build_handler(fmt=fmt)
    handler._copytrade = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level or "INFO")
    # Every venue poll is a request: httpx's per-request lines would drown the log.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return handler


def accept_request_id(raw: str | None) -> str:
    """The caller's X-Request-Id when it is a sane token, else a new one."""
    if raw and _REQUEST_ID_OK.match(raw):
        return raw
    return uuid.uuid4().hex


@contextmanager
def bound(*, request: str | None = None, job: str | None = None) -> Iterator[None]:
    """Set the request and/or job id for the code inside (and its log lines)."""
    tokens = []
    if request is not None:
        tokens.append((request_id, request_id.set(request)))
    if job is not None:
        tokens.append((job_id, job_id.set(job)))
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)
