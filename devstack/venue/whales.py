"""Scripted whales: a background thread that makes a seeded-random whale trade every interval."""

from __future__ import annotations

from devstack.venue.state import SandboxState
from devstack.venue.ticker import Ticker


class WhaleRunner(Ticker):
    """Starts and stops the whale thread of one sandbox state."""

    def __init__(self, state: SandboxState) -> None:
        super().__init__("sandbox-whales", state.whale_tick, lambda: self.seconds)
        self.state = state
        self.seconds = state.config.whale_interval

    def start(self, interval: float | None = None) -> None:
        """Start trading every `interval` seconds (no-op when already running)."""
        if interval is not None:
            self.seconds = max(0.01, float(interval))
        super().start()
