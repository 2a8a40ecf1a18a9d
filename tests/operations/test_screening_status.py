"""`copytrade status` shows the screened leaderboard (issue 46): traders ranked and replayed,
the flags raised, and this minute's venue calls against the budget."""

from __future__ import annotations

import json

from tests.api.test_copyability import scripted_clock  # noqa: F401 - the fixture
from tests.api.test_screened_traders import fresh_budget, traders  # noqa: F401 - fixtures
from tests.operations.stack import cli, stack_env


def test_status_shows_the_screening_and_its_budget(app, bound_db, redis_url, engine_prefix,
                                                   venue_server, tmp_path,
                                                   traders, fresh_budget):  # noqa: F811
    from services.copying import screening

    assert screening.screen(traders["scalper"]) is True
    env = stack_env(app, redis_url, engine_prefix, venue_server, tmp_path / "instance")
    env.update(SCREENING_INTERVAL_SECONDS="240", SCREENING_VENUE_CALLS_PER_MINUTE="77")

    data = json.loads(cli(env, "status", "--json"))["screening"]
    assert data["enabled"] is True and data["screened"] >= 1
    assert data["flags"]["high_frequency"] >= 1
    assert data["venue_calls"] == {"used": 0, "per_minute": 77}  # none under this prefix yet
    text = cli(env, "status")
    section = text[text.index("SCREENED LEADERBOARD"):]
    assert "a sweep every 240s" in section and "venue calls this minute 0 of 77" in section
    assert "high_frequency" in section

    env.update(SCREENING_INTERVAL_SECONDS="0")
    assert "SCREENED LEADERBOARD (off" in cli(env, "status")
