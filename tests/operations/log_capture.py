"""Session-wide log capture: every record of the test run goes through the production log
handler (JSON lines, context and redaction filters) into a file, which is then searched for
secrets. Registered for the whole suite by tests/conftest.py (``pytest_plugins``).

A leak fails the run at the end (exit status 1) and names the lines. The patterns match
every kind of secret the suite creates: API key secrets (``svck_live_``), OAuth tokens
(``svco_``), session and OAuth JWTs, 32-byte hex (wallet private keys, venue passphrases,
HMAC secrets), venue API secrets (url-safe base64) and six-digit sign-in codes.
"""

from __future__ import annotations

import io
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.platform import logs

SECRET_PATTERNS = {
    "api key secret": re.compile(r"svck_live_[A-Za-z0-9_-]{8,}"),
    "oauth token": re.compile(r"svco_[A-Za-z0-9_-]{8,}"),
    "jwt": re.compile(r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]+"),
    "32-byte hex (private key, passphrase)": re.compile(r"\b(0x)?[0-9a-fA-F]{64}\b"),
    "base64 secret": re.compile(r"(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*[A-Z])"
                                r"(?=[A-Za-z0-9_-]*[a-z])(?=[A-Za-z0-9_-]*[0-9])"
                                r"[A-Za-z0-9_-]{40,}={0,2}"),
    "sign-in code": re.compile(r"(?i)\bcode\b[^0-9\n]{0,40}\b\d{6}\b"),
}

_state: dict[str, object] = {}


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    """Log output of the production handler (JSON, context and redaction filters), DEBUG up."""
    stream = io.StringIO()
    handler = logs.build_handler(stream, fmt="json")
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield stream
    root.removeHandler(handler)
    root.setLevel(level)


def leaks(text: str) -> list[tuple[str, str]]:
    """(kind, line) for each line of captured output that holds a secret."""
    found = []
    for line in text.splitlines():
        if any(notice in line for notice in logs.DEV_CODE_NOTICES):
            # the documented laptop-only notice (no SMTP_URL); see services/platform/logs.py
            continue
        for kind, pattern in SECRET_PATTERNS.items():
            if pattern.search(line):
                found.append((kind, line))
    return found


def capture_path() -> Path | None:
    """The file this run's logs go to (None before the session starts)."""
    path = _state.get("path")
    return Path(str(path)) if path else None


def pytest_sessionstart(session: pytest.Session) -> None:
    """Attach the production handler, writing to a file, to the root logger."""
    # COPYTRADE_TEST_LOGS keeps the file somewhere chosen (CI artifacts); else the run's own
    # temp folder, which pytest removes with the run's other folders three runs later (a
    # folder of tempfile's own was left in /tmp by every worker of every run).
    chosen = os.environ.get("COPYTRADE_TEST_LOGS")
    folder = Path(chosen) if chosen else session.config._tmp_path_factory.mktemp("logs")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"test-logs-{os.getpid()}.jsonl"
    stream = path.open("w", encoding="utf-8")
    handler = logs.build_handler(stream, fmt="json")
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    root.addHandler(handler)
    _state.update(path=str(path), handler=handler, stream=stream, level=root.level)
    root.setLevel(min(root.level or logging.WARNING, logging.INFO))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """Under pytest-xdist (the run's controller): keep what a worker's search found."""
    found = getattr(node, "workeroutput", {}).get("log_leaks") or []
    _state.setdefault("worker_leaks", []).extend(found)  # type: ignore[union-attr]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Detach, then fail the run if any captured line holds a secret.

    An xdist worker hands what it found to the controller (its own exit status is not the
    run's), which fails the run for every worker's leaks and its own.
    """
    handler = _state.get("handler")
    if handler is None:
        return
    logging.getLogger().removeHandler(handler)  # type: ignore[arg-type]
    _state["stream"].close()  # type: ignore[union-attr]
    path = str(_state["path"])
    found = [(kind, line, path) for kind, line in
             leaks(Path(path).read_text(encoding="utf-8", errors="replace"))]
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker
        workeroutput["log_leaks"] = found
        return
    found += [tuple(leak) for leak in _state.get("worker_leaks") or []]  # type: ignore[union-attr]
    if found:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = "\n".join(f"  {kind}: {line[:300]}" for kind, line, _ in found[:20])
        files = ", ".join(sorted({where for _, _, where in found}))
        text = (f"secrets found in the test run's logs ({len(found)} line(s), "
                f"{files}):\n{message}")
        if reporter is not None:
            reporter.write_line(text, red=True)
        session.exitstatus = 1
