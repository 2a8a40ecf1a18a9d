"""The soak stops its world before checking it (issue 43's ledger finding).

`copytrade sandbox`, which the soak's stack runs, starts the sandbox's own whale thread (a
whale trade every few seconds). The soak used to stop only its own whale bursts and the
market ends before its checks, so copies kept filling while the checks read the app, the
venue and the chain one after another: a copy filled between reading a follower's pUSD and
its positions left its trades short of the chain's shares while its pUSD agreed (seed
863625511). The sandbox here is served over HTTP as the soak's is, whales on.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from bench.soak.world import still_venue
from devstack.venue.server import SandboxServer
from tests.devstack.venue.conftest import Control


@pytest.fixture
def busy_venue() -> Iterator[Control]:
    """A sandbox whose whales trade by themselves, as `copytrade sandbox` serves it."""
    venue = SandboxServer(seed=11, whales=True).start()
    control = Control(venue)
    try:
        yield control
    finally:
        control.close()
        venue.stop()


def _whale_trades(control: Control) -> int:
    return len(control.get("/data/trades", limit=500))


def test_the_soak_stills_the_sandbox_before_its_checks(busy_venue: Control) -> None:
    control = busy_venue
    control.call("POST", "/whales/start", {"interval": "0.05"}, expect=200)
    control.call("POST", "/lifespans", {"lifetime": 30}, expect=200)
    control.call("POST", "/faults", {"path": "/clob/order", "method": "POST", "count": 2,
                                     "after": True, "status": 500}, expect=201)
    control.http.post("/_sandbox/restart", json={"seconds": "30", "post_only_seconds": "30",
                                                 "retry_after": 1}).raise_for_status()
    assert control.state()["mode"]["mode"] != "open"
    deadline = time.monotonic() + 10
    while _whale_trades(control) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _whale_trades(control) >= 3  # the world moves by itself

    def call(method: str, path: str, body: object = None) -> object:
        answer = control.http.request(method, f"/_sandbox{path}", json=body)
        answer.raise_for_status()
        return answer.json()

    still_venue(call)

    state = control.state()
    assert state["whales_running"] is False
    assert state["faults"] == []
    assert state["mode"]["mode"] == "open"
    assert state["lifespans"]["lifetime"] == "0"
    before = _whale_trades(control)
    time.sleep(0.5)  # ten of the thread's intervals
    assert _whale_trades(control) == before
