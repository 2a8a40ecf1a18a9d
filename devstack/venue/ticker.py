"""A background thread that does one thing every interval until stopped (whales, market ends)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Ticker:
    """Calls ``tick`` every ``interval()`` seconds in a daemon thread, between start and stop."""

    def __init__(self, name: str, tick: Callable[[], object],
                 interval: Callable[[], float]) -> None:
        self.name = name
        self.tick = tick
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    @property
    def running(self) -> bool:
        """True while the thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the thread (no-op when it runs)."""
        with self._guard:
            if self.running:
                return
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._run, args=(self._stop,),
                                            name=self.name, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it."""
        with self._guard:
            thread, self._thread = self._thread, None
            self._stop.set()
        if thread is not None:
            thread.join(timeout=10)

    def _run(self, stop: threading.Event) -> None:
        # Event.wait is the pacing: the thread wakes at once when stopped.
        while not stop.wait(self.interval()):
            try:
                self.tick()
            except Exception:  # one bad tick must not stop a local run's world
                log.exception("%s: tick failed", self.name)
