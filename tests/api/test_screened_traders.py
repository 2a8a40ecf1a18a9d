"""The screened leaderboard against the sandbox over real HTTP (issue 46): the background
replay stored per trader, its budget, GET /api/traders sorting and filtering by it, the
comparison, and the honesty check: a trader's leaderboard numbers equal the single-trader
copyability report's to the base unit."""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest

from tests.api.test_copyability import scripted_clock  # noqa: F401 - the fixture
from tests.chain_venue import run_queued_jobs

D = Decimal


@pytest.fixture
def fresh_budget(app, monkeypatch) -> None:
    """This minute's screening budget unspent (earlier tests of this worker share the
    Redis prefix), and the budget's minute held still for the test: a loaded machine's
    sweep may cross a minute's end, which would hand it a second budget mid-test. The
    venue's leaderboard answers are not cached."""
    from services.copying import screening
    from services.platform import jobs, venues

    connection = jobs.connection()
    for key in connection.scan_iter(f"{jobs.current_config().prefix}screening-calls:*"):
        connection.delete(key)
    now = screening.minute()
    monkeypatch.setattr(screening, "minute", lambda: now)
    venues.client().cache.invalidate("data:lb:")


def _address() -> str:
    return "0x" + secrets.token_hex(20)


def _script(venue_control, clock, token: str, trades: list[tuple[int, str, str, str, str]],
            start: int) -> None:
    for offset, wallet, side, size, price in trades:
        clock[0] = start + offset
        venue_control.call("POST", "/trades", {"wallet": wallet, "token_id": token,
                                               "side": side, "size": size, "price": price},
                           expect=201)
    clock[0] = time.time()


@pytest.fixture
def traders(venue_control, scripted_clock) -> dict[str, Any]:  # noqa: F811 - the fixture
    """A swing trader (six fills over hours, one of them large enough to top the volume
    board) and a scalper (twelve round trips of a few seconds), in a market of their own."""
    slug = f"screened-{secrets.token_hex(4)}"
    market = venue_control.add_market(slug, fair_price="0.5", liquidity=True,
                                      min_order_size="5")
    yes = market["token_ids"][0]
    swing, scalper, mover = _address(), _address(), _address()
    start = (int(time.time()) // 3600) * 3600 - 2 * 86400
    _script(venue_control, scripted_clock, yes, [
        (0, swing, "BUY", "2000000", "0.50"),
        (5, mover, "BUY", "10", "0.52"),
        (600, swing, "BUY", "300", "0.55"),
        (1800, swing, "SELL", "150", "0.70"),
        (1805, mover, "BUY", "10", "0.68"),
        (2400, swing, "BUY", "40", "0.70"),
        (3000, swing, "BUY", "20", "0.72"),
        (3600, swing, "SELL", "100", "0.74"),
    ], start)
    scalps = []
    for trip in range(12):
        at = 4000 + trip * 100
        scalps += [(at, scalper, "BUY", "1000000", "0.60"), (at + 5, scalper, "SELL", "1000000",
                                                             "0.61")]
    _script(venue_control, scripted_clock, yes, scalps, start)
    return {"slug": slug, "token": yes, "swing": swing, "scalper": scalper}


def test_a_ranked_trader_is_replayed_and_its_numbers_equal_its_report(
        client, api_key, bound_db, traders, fresh_budget):
    from models.copying import TraderScreening
    from services.copying import screening, screening_rows

    assert screening.screen(traders["swing"]) is True
    row = TraderScreening.get(TraderScreening.address == traders["swing"])
    assert row.fill_count == 6 and row.trades == 6 and row.markets == 1
    assert row.cursor is not None and row.updated_at is not None

    headers = {"Authorization": f"Bearer {api_key('read:markets')}"}
    asked = client.post(f"/api/traders/{traders['swing']}/copyability", headers=headers,
                        json={"window": "30d", "rules": screening.DEFAULT_RULES})
    assert asked.status_code == 202, asked.get_json()
    assert "copyability.report" in run_queued_jobs(only={"copyability.report"})
    report = client.get(asked.get_json()["location"], headers=headers).get_json()["report"]

    # The leaderboard's numbers are the report's, to the base unit.
    assert screening_rows.amount(row.copier_pnl_p50) == D(report["p50"]["expected_pnl_usdc"])
    assert screening_rows.amount(row.copier_pnl_p95) == D(report["p95"]["expected_pnl_usdc"])
    assert screening_rows.amount(row.trader_pnl) == D(report["target"]["pnl_usdc"])
    assert screening_rows.amount(row.drawdown) == D(report["p50"]["max_drawdown_usdc"])
    assert screening_rows.amount(row.volume) == D(report["target"]["volume_usdc"])
    assert row.fill_count == report["fills"]
    # ... and the copy earned something different from the trader (the rules capped it).
    assert row.copier_pnl_p50 != row.trader_pnl


def test_only_new_fills_are_read_again_and_a_new_one_is_replayed(
        bound_db, traders, venue_control, fresh_budget):
    from models.copying import TraderScreening
    from services.copying import screening

    assert screening.screen(traders["swing"]) is True
    first = TraderScreening.get(TraderScreening.address == traders["swing"])
    used = screening.budget(*_budget_args())["used"]
    # Nothing new: one look (fills since the cursor, positions counted), no replay.
    assert screening.screen(traders["swing"]) is True
    again = TraderScreening.get(TraderScreening.address == traders["swing"])
    assert again.updated_at == first.updated_at and again.checked_at > first.checked_at
    assert screening.budget(*_budget_args())["used"] == used + screening.LOOK_CALLS
    # A new fill: replayed, resting on one fill more.
    venue_control.call("POST", "/trades", {"wallet": traders["swing"],
                                           "token_id": traders["token"], "side": "BUY",
                                           "size": "10", "price": "0.5"}, expect=201)
    assert screening.screen(traders["swing"]) is True
    third = TraderScreening.get(TraderScreening.address == traders["swing"])
    assert third.fill_count == 7 and third.updated_at > first.updated_at
    assert third.cursor >= first.cursor


def _budget_args() -> tuple[Any, str, int]:
    from services.platform import jobs
    from services.platform.runtime import runtime

    return (jobs.connection(), jobs.current_config().prefix,
            runtime().settings.screening.venue_calls_per_minute)


def test_the_sweep_ranks_then_stops_at_the_minutes_budget(bound_db, traders, set_settings,
                                                         fresh_budget):
    from models.copying import TraderScreening
    from services.copying import screening
    from services.platform.runtime import runtime

    limits = runtime().settings.screening
    # The leaderboards (8 calls) and one look (2), not a second one.
    set_settings(screening=replace(limits, venue_calls_per_minute=10))
    screening.enqueue_sweep()
    assert run_queued_jobs(only={screening.JOB}) == [screening.JOB]
    swing = TraderScreening.get(TraderScreening.address == traders["swing"])
    assert swing.ranks and "all:volume" in swing.ranks  # its 1M pUSD tops the volume board
    budget = screening.budget(*_budget_args())
    assert budget == {"used": 10, "per_minute": 10}
    # Not one replay could read its markets in what was left: nothing was replayed.
    assert TraderScreening.select().where(TraderScreening.updated_at.is_null(False),
                                          TraderScreening.checked_at.is_null(False)).count() \
        <= 1


def test_a_trader_too_big_for_a_minutes_budget_is_told_and_passed_over(
        bound_db, traders, set_settings, fresh_budget):
    from models.copying import TraderScreening
    from services.copying import screening
    from services.platform.runtime import runtime

    # The look (2 calls) fits; its one market's 3 reads never could.
    set_settings(screening=replace(runtime().settings.screening, venue_calls_per_minute=2))
    assert screening.screen(traders["swing"]) is True  # the sweep goes on to the next
    row = TraderScreening.get(TraderScreening.address == traders["swing"])
    assert row.updated_at is None and row.checked_at is not None
    assert "SCREENING_VENUE_CALLS_PER_MINUTE (2)" in row.error


def test_traders_sort_filter_and_search_by_the_replay(client, api_key, bound_db, traders,
                                                      fresh_budget):
    from services.copying import screening

    for wallet in (traders["swing"], traders["scalper"]):
        assert screening.screen(wallet) is True
    headers = {"Authorization": f"Bearer {api_key('read:markets')}"}

    def listed(**params: Any) -> list[dict[str, Any]]:
        answer = client.get("/api/traders", query_string={"period": "all", "order_by": "volume",
                                                          "limit": 50, **params},
                            headers=headers)
        assert answer.status_code == 200, answer.get_json()
        return answer.get_json()

    ours = {traders["swing"], traders["scalper"]}
    rows = {r["address"]: r for r in listed() if r["address"] in ours}
    assert set(rows) == ours
    scalper = rows[traders["scalper"]]["screening"]
    assert scalper["kind"] == "replay" and scalper["fills"] == 24
    assert scalper["cannot_know"] and scalper["updated_at"]
    assert "high_frequency" in scalper["flags"]
    assert scalper["flag_numbers"]["high_frequency"]["median_hold_seconds"] == 5
    assert scalper["flag_numbers"]["high_frequency"]["round_trips"] == 12
    assert scalper["avg_hold_seconds"] == 5
    swing = rows[traders["swing"]]["screening"]
    assert "high_frequency" not in swing["flags"] and "thin_history" in swing["flags"]
    # The share of its own PnL a copier keeps: the replay's p50 PnL over the trader's.
    kept = D(swing["copier_pnl_p50_usdc"]) / D(swing["trader_pnl_usdc"])
    assert D(swing["kept_share"]) == kept.quantize(D("0.0001"))
    assert swing["flag_numbers"]["thin_history"] == {"fills": 6, "min_fills": 20}

    # Filters: by flag, without a flag, by a column's bounds, by search.
    flagged = [r["address"] for r in listed(flag="high_frequency") if r["address"] in ours]
    assert flagged == [traders["scalper"]]
    unflagged = [r["address"] for r in listed(without_flag="high_frequency")
                 if r["address"] in ours]
    assert unflagged == [traders["swing"]]
    assert [r["address"] for r in listed(min_trades=20) if r["address"] in ours] == [
        traders["scalper"]]
    assert [r["address"] for r in listed(q=traders["swing"][2:12].upper())] == [
        traders["swing"]]
    # Sorts: by trades, both ways; rows not replayed come last.
    by_trades = [r["address"] for r in listed(sort="trades") if r["address"] in ours]
    assert by_trades == [traders["scalper"], traders["swing"]]
    ascending = [r["address"] for r in listed(sort="trades", direction="asc")
                 if r["address"] in ours]
    assert ascending == [traders["swing"], traders["scalper"]]
    everyone = listed(sort="trades")
    replayed = [r["screening"] is not None for r in everyone]
    assert replayed == sorted(replayed, reverse=True)

    # The profile carries the same replay.
    profile = client.get(f"/api/traders/{traders['scalper']}", headers=headers).get_json()
    assert profile["screening"] == rows[traders["scalper"]]["screening"]

    # Today's arguments still work, alone.
    plain = client.get("/api/traders?period=week&order_by=pnl&limit=5", headers=headers)
    assert plain.status_code == 200 and len(plain.get_json()) <= 5


@pytest.mark.parametrize(("params", "field"), [
    ({"period": "year"}, "period"), ({"sort": "luck"}, "sort"), ({"flag": "whale"}, "flag"),
    ({"without_flag": "lucky"}, "without_flag"), ({"direction": "up"}, "direction"),
    ({"min_trades": "many"}, "min_trades")])
def test_unknown_values_are_refused_naming_the_field(client, api_key, params, field):
    headers = {"Authorization": f"Bearer {api_key('read:markets')}"}
    answer = client.get("/api/traders", query_string=params, headers=headers)
    assert answer.status_code == 400
    body = answer.get_json()
    assert body["code"] == "validation_failed" and field in str(body), body


def test_compare_puts_replays_side_by_side(client, api_key, bound_db, traders, fresh_budget):
    from services.copying import screening

    assert screening.screen(traders["swing"]) is True
    headers = {"Authorization": f"Bearer {api_key('read:markets')}"}
    unknown = _address()
    answer = client.get("/api/traders/compare", headers=headers, query_string={
        "addresses": f"{traders['swing']},{unknown}"})
    assert answer.status_code == 200, answer.get_json()
    swing, other = answer.get_json()
    assert swing["address"] == traders["swing"] and other["address"] == unknown
    assert other["screening"] is None and other["p50"] is None and other["equity"] == []
    assert swing["screening"]["fills"] == 6
    assert D(swing["p50"]["capital_needed_usdc"]) > 0
    assert swing["rules"]["max_position_usdc"] == "100"
    # The equity curve ends at the replay's PnL at p50.
    assert D(swing["equity"][-1]["pnl_usdc"]) == D(swing["screening"]["copier_pnl_p50_usdc"])
    too_many = ",".join(_address() for _ in range(6))
    refused = client.get("/api/traders/compare", headers=headers,
                         query_string={"addresses": too_many})
    assert refused.status_code == 400 and "addresses" in str(refused.get_json())


def test_the_sandbox_maker_and_scalper_get_their_flags(
        bound_db, venue_control, scripted_clock, set_settings, fresh_budget):  # noqa: F811
    from models.copying import TraderScreening
    from services.copying import screening
    from services.platform.runtime import runtime

    set_settings(screening=replace(runtime().settings.screening, venue_calls_per_minute=10000))
    styles = venue_control.state()["styles"]
    start = int(time.time()) - 86400
    for round_number in range(24):  # a round every 15 s, as `copytrade up` would
        scripted_clock[0] = start + 15 * round_number
        venue_control.call("POST", "/styles/tick", None, expect=201)
    scripted_clock[0] = time.time()
    flagged = {}
    for name, wallet in styles.items():
        assert screening.screen(wallet, force=True) is True
        row = TraderScreening.get(TraderScreening.address == wallet.lower())
        flagged[name] = json.loads(row.flags)
    assert "market_maker" in flagged["market_maker"]
    assert D(flagged["market_maker"]["market_maker"]["two_sided_share"]) == 1
    assert "high_frequency" in flagged["scalper"] and "market_maker" not in flagged["scalper"]
    assert flagged["scalper"]["high_frequency"]["median_hold_seconds"] == 15
