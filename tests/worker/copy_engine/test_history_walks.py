"""Every history walk reads Data API v2 cursor pages (ACCOUNTS.md §11: v1 ``offset`` paging
stops at 10,000 rows; issue 33 item 5): with the v1 ``/activity`` route failing, trader
profiles, target profiles (config previews), the copyability replay and the copy engine's
catch-up poll all still read the target's fills, and none of them asked v1."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from services.copying import copyability_reports, traders
from services.copying.configs.targets import target_profile
from tests.chain_venue import run_queued_jobs
from tests.worker.copy_engine.conftest import FAST, inject, owned, settled, wait_for

POLL_ONLY = replace(FAST, use_feed=False)  # the catch-up poll is the only detection


@pytest.fixture
def v1_refused(venue_control: Any):
    """The v1 route answers 500 (what a walk stuck on v1 would meet), v2 as usual."""
    venue_control.call("DELETE", "/requests", expect=200)
    venue_control.call("POST", "/faults", {"path": "/data/activity", "status": 500,
                                           "count": 10_000}, expect=201)
    yield
    venue_control.call("DELETE", "/faults", expect=200)
    tally = venue_control.call("GET", "/requests", expect=200)
    assert "GET /data/activity" not in tally and tally.get("GET /data/v2/activity")


def test_profiles_and_the_replay_walk_v2_cursors(v1_refused, venue_control, market, target,
                                                 trader):
    for size in ("10", "20", "30"):
        venue_control.call("POST", "/trades", {"wallet": target, "token_id": market.yes,
                                               "side": "BUY", "size": size, "price": "0.5"},
                           expect=201)
    assert len(traders.trader_profile(target)["recent_trades"]) == 3
    assert target_profile(target)["recent_trades"] == 3
    rules = {"size_multiplier": "0.5", "max_position_usdc": "100", "price_deviation_bps": 1000}
    cached, operation = copyability_reports.request(trader.user, target,
                                                    {"window": "7d", "rules": rules})
    assert not cached
    assert "copyability.report" in run_queued_jobs(only={"copyability.report"})
    done = copyability_reports.describe(copyability_reports.get(operation["id"]))
    assert done["status"] == "done" and done["report"]["fills"] == 3, done["error"]


def test_the_engines_catch_up_poll_walks_v2_cursors(v1_refused, run_engines, make_config,
                                                    trader, market, target, venue_control):
    config = make_config(trader.user, target)

    async def scenario(engines):
        await owned(engines[0], target)
        await inject(venue_control, target, market.yes, "BUY", "10", "0.5")
        await wait_for(settled(config, 1))
        assert engines[0].stats.poll_fills == 1

    run_engines(scenario, settings=POLL_ONLY)
