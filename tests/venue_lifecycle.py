"""A hand-moved clock for the shared sandbox venue, and its switches put back afterwards.

The ``venue_clock`` fixture (tests/conftest.py) wraps ``hand_moved_clock`` for a test: the
venue's matching delays and trade settlement (devstack/venue/lifecycle.py) run on it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

DEFAULT_SWITCHES = {"empty_finished_orders": True, "mined_after": 2, "confirmed_after": 6,
                    "fail_next": 0, "associate_trades": True, "split_parts": 1,
                    "split_every": 0}


class VenueClock:
    """The sandbox venue's clock, moved by hand."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass at the venue."""
        self.now += seconds


@contextlib.contextmanager
def hand_moved_clock(venue_server: Any, venue_control: Any) -> Iterator[VenueClock]:
    """A hand-moved venue clock; the venue's own clock, switches and faults come back after."""
    state = venue_server.state
    original = state.clock
    clock = VenueClock()
    state.clock = clock
    try:
        yield clock
    finally:
        state.clock = original
        venue_control.call("POST", "/lifecycle", DEFAULT_SWITCHES, expect=200)
        venue_control.call("DELETE", "/faults", expect=200)


def delay_market(venue_control: Any, condition_id: str, seconds: int) -> None:
    """Give a sandbox market a matching delay (Gamma ``secondsDelay``)."""
    venue_control.call("POST", f"/markets/{condition_id}/delay", {"seconds": seconds},
                       expect=200)


def fail_next_trade(venue_control: Any, mined_after: int = 1, confirmed_after: int = 3) -> None:
    """The next trade of an API-key order goes RETRYING after ``mined_after`` s, then FAILED."""
    venue_control.call("POST", "/lifecycle", {"fail_next": 1, "mined_after": mined_after,
                                              "confirmed_after": confirmed_after}, expect=200)
