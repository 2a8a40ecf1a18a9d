"""Notification test fixtures: loopback URLs allowed, short retries, a queue of the test's own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from config import NotificationConfig
from services.platform import runtime
from tests.conftest import DEADLINE
from tests.worker.conftest import prefix, redis_conn  # noqa: F401 - fixtures

FAST = NotificationConfig(allow_loopback_urls=True, retry_seconds=(0.2, 0.4, 0.8, 1.6),
                          tick_seconds=0.1, burst=5, burst_window_seconds=60,
                          # A send's budget is the suite's DEADLINE: a loopback receiver at
                          # load 40 took 5.4 s, and no test here times a slow receiver out.
                          send_deadline_seconds=DEADLINE)


@pytest.fixture
def tune(app: Any, prefix: str) -> Iterator[Callable[..., Any]]:  # noqa: F811
    """``tune(**changes)``: the runtime's notification settings are FAST with ``changes``;
    other settings (``smtp_url=...``) may be given as ``settings={...}``."""
    base = runtime.runtime()

    def apply(settings: dict[str, Any] | None = None, **changes: Any) -> Any:
        current = runtime.runtime()
        updated = replace(current.settings, **(settings or {}),
                          notifications=replace(FAST, **changes))
        runtime.install(replace(current, settings=updated))
        return updated

    apply()
    yield apply
    runtime.install(base)
