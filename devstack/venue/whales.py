"""Scripted whales: a background thread that makes a seeded-random whale trade every interval."""

from __future__ import annotations

import logging
import threading

from devstack.venue.state import SandboxState

log = logging.getLogger(__name__)


class WhaleRunner:
    """Starts and stops the whale thread of one sandbox state."""

    def __init__(self, state: SandboxState) -> None:
        self.state = state
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()
        self.interval = state.config.whale_interval

    @property
    def running(self) -> bool:
        """True while the thread trades."""
        return self._thread is not None and self._thread.is_alive()

    def start(self, interval: float | None = None) -> None:
        """Start trading every `interval` seconds (no-op when already running)."""
        with self._guard:
            if interval is not None:
                self.interval = max(0.01, float(interval))
            if self.running:
                return
            self._stop = threading.Event()
            self._thread = threading.Thread(
                target=self._run, args=(self._stop,), name="sandbox-whales", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it."""
        with self._guard:
            thread, self._thread = self._thread, None
            self._stop.set()
        if thread is not None:
            thread.join(timeout=5)

    def _run(self, stop: threading.Event) -> None:
        # Event.wait is the pacing: the thread wakes at once when stopped.
        while not stop.wait(self.interval):
            try:
                self.state.whale_tick()
            except Exception:  # a bad tick must not kill the feed of a local run
                log.exception("whale tick failed")
