"""History walks over Data API v2 cursors (ACCOUNTS.md §11: v1 ``offset`` stops at 10,000
rows), with v1 offset pages only when the v2 route is refused."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from devstack.venue import SandboxServer
from tests.devstack.venue.conftest import Control
from venue.client import HISTORY_PAGE, VenueClient
from venue.config import VenueConfig


@pytest.fixture
def busy_wallet() -> Iterator[tuple[SandboxServer, str]]:
    venue = SandboxServer(seed=3).start()
    ctl = Control(venue)
    wallet = "0x" + secrets.token_hex(20)
    token = ctl.market()["token_ids"][0]
    for _ in range(HISTORY_PAGE + 20):  # more than one page
        ctl.call("POST", "/trades", {"wallet": wallet, "token_id": token, "side": "BUY",
                                     "size": "1"}, expect=201)
    try:
        yield venue, wallet
    finally:
        ctl.close()
        venue.stop()


def test_the_walk_follows_v2_cursors_and_falls_back_to_v1(busy_wallet) -> None:
    venue, wallet = busy_wallet
    ctl = Control(venue)
    ctl.call("DELETE", "/requests", expect=200)
    with VenueClient(VenueConfig.for_sandbox(venue.url)) as client:
        rows = client.activity_history(wallet, types="TRADE")
        assert len(rows) == HISTORY_PAGE + 20
        assert len(client.activity_history(wallet, types="TRADE", max_rows=7)) == 7
        tally = ctl.call("GET", "/requests", expect=200)
        assert sum(tally.get("GET /data/v2/activity", {}).values()) == 3
        assert "GET /data/activity" not in tally
        # The v2 route refused (an older venue): v1 offset pages, the same rows.
        ctl.call("POST", "/faults", {"path": "/data/v2/activity", "status": 404},
                 expect=201)
        again = client.activity_history(wallet, types="TRADE")
        assert sorted(r.dedup_key for r in again) == sorted(r.dedup_key for r in rows)
    ctl.close()
