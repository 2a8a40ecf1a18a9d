"""POST /api/traders/{address}/copyability against the sandbox over real HTTP (issue 30 item 2).

The hand-computed case: a target with five fills in one market, scripted on the sandbox at
chosen times with a second wallet moving the price at the delays, a fixed book (the house's
ladder around 0.50), a 4 % fee rate and our rules. Every number of the report is worked out
below by hand, in comments, and compared exactly (to the base unit, 0.000001).
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from tests.chain_venue import run_queued_jobs

D = Decimal
RULES = {"size_multiplier": "0.5", "max_position_usdc": "100", "price_deviation_bps": 1000,
         "min_target_trade_usdc": "5"}
DELAYS = {"delay_p50_ms": 5000, "delay_p95_ms": 65000}


@pytest.fixture
def scripted_clock(venue_server: Any) -> Iterator[list[float]]:
    """The sandbox's clock reads the list's one value (set it before each scripted trade);
    the real clock afterwards."""
    state = venue_server.state
    original = state.clock
    now = [time.time()]
    state.clock = lambda: now[0]
    try:
        yield now
    finally:
        state.clock = original


def _address() -> str:
    return "0x" + secrets.token_hex(20)


@pytest.fixture
def five_fills(venue_control, scripted_clock) -> dict[str, Any]:
    """The target's five fills, and the mover's trades that set the price at each delay."""
    slug = f"copyability-{secrets.token_hex(4)}"
    market = venue_control.add_market(slug, fair_price="0.5", liquidity=True,
                                      min_order_size="5")
    venue_control.call("POST", f"/markets/{market['condition_id']}/fees",
                       {"rate": "0.04", "exponent": 1}, expect=200)
    yes = market["token_ids"][0]
    target, mover = _address(), _address()
    # T: two days ago, on the hour, so every minute bucket of the price history (fidelity 1)
    # starts at T + 60k: each bucket keeps its last point.
    start = (int(time.time()) // 3600) * 3600 - 2 * 86400
    script = [  # (seconds after T, wallet, side, size, price)
        (0, target, "BUY", "200", "0.50"),     # fill 1
        (5, mover, "BUY", "10", "0.52"),       # the price at p50 (5 s)
        (65, mover, "BUY", "10", "0.53"),      # ... and at p95 (65 s)
        (600, target, "BUY", "300", "0.55"),   # fill 2
        (605, mover, "BUY", "10", "0.62"),
        (665, mover, "BUY", "10", "0.58"),
        (1200, target, "BUY", "8", "0.60"),    # fill 3: worth 4.80
        (1800, target, "SELL", "150", "0.70"),  # fill 4
        (1805, mover, "BUY", "10", "0.68"),
        (1865, mover, "BUY", "10", "0.66"),
        (2400, target, "BUY", "40", "0.70"),   # fill 5
        (3000, mover, "BUY", "10", "0.75"),    # the last price: the mark
    ]
    for offset, wallet, side, size, price in script:
        scripted_clock[0] = start + offset
        venue_control.call("POST", "/trades", {"wallet": wallet, "token_id": yes, "side": side,
                                               "size": size, "price": price}, expect=201)
    scripted_clock[0] = time.time()
    return {"slug": slug, "token": yes, "target": target}


def _ask(client, headers, address: str, body: dict[str, Any]):
    return client.post(f"/api/traders/{address}/copyability", json=body, headers=headers)


def test_five_fills_replayed_by_hand_to_the_base_unit(client, api_key, venue_control,
                                                      five_fills):
    headers = {"Authorization": f"Bearer {api_key('read:markets')}"}
    # The fixed book: the house's ladder around 0.50, untouched by the scripted trades.
    book = venue_control.get("/clob/book", token_id=five_fills["token"])
    assert sorted((D(b["price"]), D(b["size"])) for b in book["bids"])[-2:] == [
        (D("0.48"), D(500)), (D("0.49"), D(250))]
    assert sorted((D(a["price"]), D(a["size"])) for a in book["asks"])[:2] == [
        (D("0.51"), D(250)), (D("0.52"), D(500))]

    asked = _ask(client, headers, five_fills["target"], {"window": "7d", "rules": RULES,
                                                         **DELAYS})
    assert asked.status_code == 202, asked.get_json()
    operation = asked.get_json()
    assert operation["status"] == "queued" and operation["report"] is None
    assert asked.headers["Location"] == operation["location"]
    # (an earlier test on this xdist worker may have left its own report job queued)
    assert "copyability.report" in run_queued_jobs(only={"copyability.report"})
    followed = client.get(operation["location"], headers=headers)
    assert followed.status_code == 200
    done = followed.get_json()
    assert done["status"] == "done", done
    assert done["progress"] == {"done": 3, "total": 3, "stage": "done"}  # fills, 1 market
    report = done["report"]

    # Cached: the same question is answered at once, with the same report.
    again = _ask(client, headers, five_fills["target"], {"window": "7d", "rules": RULES,
                                                         **DELAYS})
    assert again.status_code == 200 and again.get_json()["report"] == report
    assert run_queued_jobs(only={"copyability.report"}) == []

    assert report["delays"] == {"p50_ms": 5000, "p95_ms": 65000, "source": "assumed",
                                "samples": 0}
    assert report["fills"] == 5 and report["truncated"] is False

    # The mark: the last price, 0.75. The target's PnL per fill, size x 0.75 - paid (buys),
    # got - size x 0.75 (sells); the sandbox reports no fees:
    #   1: 200 x 0.75 - 200 x 0.50 = 150 - 100     =  50
    #   2: 300 x 0.75 - 300 x 0.55 = 225 - 165     =  60
    #   3:   8 x 0.75 -   8 x 0.60 = 6 - 4.8       =   1.2
    #   4: 150 x 0.70 - 150 x 0.75 = 105 - 112.5   =  -7.5
    #   5:  40 x 0.75 -  40 x 0.70 = 30 - 28       =   2
    #   total 105.7; volume 100 + 165 + 4.8 + 105 + 28 = 402.8
    assert report["target"] == {"pnl_usdc": "105.7", "fees_usdc": "0",
                                "volume_usdc": "402.8", "markets": 1}

    # p50 (5 s). Fee per share: 0.04 x p x (1 - p), per level, rounded half up to 5 dp.
    # Fill 1 (BUY 200 @ 0.50): the price 5 s later is 0.52, so the book (mid 0.50) moves
    #   up 0.02: asks 0.53 x 250, 0.54 x 500...; 0.53 is 600 bps from 0.50 (guard 1000).
    #   Limit 0.50 + 10 % = 0.55; 200 x 0.5 = 100 shares (cap: 100 / (0.55 + 0.04 x 0.55 x
    #   0.45) = 178.60 shares). Walk: 100 @ 0.53 = 53; fee 100 x 0.04 x 0.53 x 0.47 =
    #   0.9964; cost 53.9964. Its PnL: 100 x 0.75 - 53.9964 = 21.0036.
    # Fill 2 (BUY 300 @ 0.55): 0.62 at 5 s, best ask 0.63: (0.63 - 0.55) / 0.55 = 1454 bps
    #   > 1000: skipped, price_deviation (too fast).
    # Fill 3 (BUY 8 @ 0.60): worth 4.80 < 5: below_min_target_trade (too small).
    # Fill 4 (SELL 150 @ 0.70): the target held 508 (200 + 300 + 8), so it sold 150/508;
    #   we sell round_down(100 x 150 / 508 = 29.527...) = 29.52. 0.68 at 5 s: bids move up
    #   0.18, best bid 0.67 (428 bps). Walk: 29.52 @ 0.67 = 19.7784; fee 29.52 x 0.04 x
    #   0.67 x 0.33 = 0.26107488 -> 0.26107; proceeds 19.51733. PnL: 19.51733 - 29.52 x 0.75
    #   (22.14) = -2.62267.
    # Fill 5 (BUY 40 @ 0.70): no trade since, 0.70: asks up 0.20, best 0.71 (142 bps);
    #   20 shares. Walk: 20 @ 0.71 = 14.2; fee 20 x 0.04 x 0.71 x 0.29 = 0.16472; cost
    #   14.36472. PnL: 15 - 14.36472 = 0.63528.
    # Expected PnL: 21.0036 - 2.62267 + 0.63528 = 19.01621 (cash -53.9964 + 19.51733
    #   - 14.36472 = -48.84379, plus 90.48 shares x 0.75 = 67.86). Versus the target:
    #   19.01621 - 105.7 = -86.68379. Fees 0.9964 + 0.26107 + 0.16472 = 1.42219; volume
    #   53 + 19.7784 + 14.2 = 86.9784.
    # Equity after each copy, shares at the price then: -53.9964 + 100 x 0.52 = -1.9964;
    #   -34.47907 + 70.48 x 0.68 = 13.44733; -48.84379 + 90.48 x 0.70 = 14.49221; the end
    #   19.01621: max drawdown 1.9964 (from 0). Capital needed: the most cash out, 53.9964.
    assert report["p50"] == {
        "delay_ms": 5000, "copies": 3, "exits": 0, "skips": 2,
        "skips_by_reason": {"below_min_target_trade": 1, "price_deviation": 1},
        "expected_pnl_usdc": "19.01621", "versus_target_usdc": "-86.68379",
        "fees_usdc": "1.42219", "volume_usdc": "86.9784", "max_drawdown_usdc": "1.9964",
        "capital_needed_usdc": "53.9964"}

    # p95 (65 s).
    # Fill 1: 0.53 at 65 s, best ask 0.54 (800 bps): 100 @ 0.54 = 54; fee 100 x 0.04 x
    #   0.54 x 0.46 = 0.9936; cost 54.9936; PnL 75 - 54.9936 = 20.0064.
    # Fill 2: 0.58 at 65 s, best ask 0.59 ((0.59 - 0.55) / 0.55 = 727 bps). Limit 0.55 +
    #   10 % = 0.605 -> 0.60; a share costs at most 0.60 + 0.04 x 0.60 x 0.40 = 0.6096; the
    #   cap leaves 100 - 54.9936 = 45.0064: round_down(45.0064 / 0.6096 = 73.829...) =
    #   73.82 of the 150 wanted. Walk: 73.82 @ 0.59 = 43.5538; fee 73.82 x 0.04 x 0.59 x
    #   0.41 = 0.71428232 -> 0.71428; cost 44.26808; PnL 73.82 x 0.75 (55.365) - 44.26808
    #   = 11.09692.
    # Fill 3: below_min_target_trade.
    # Fill 4: we hold 173.82; round_down(173.82 x 150 / 508 = 51.324...) = 51.32. 0.66 at
    #   65 s, best bid 0.65 (714 bps). Walk: 51.32 @ 0.65 = 33.358; fee 51.32 x 0.04 x 0.65
    #   x 0.35 = 0.467012 -> 0.46701; proceeds 32.89099; PnL 32.89099 - 51.32 x 0.75
    #   (38.49) = -5.59901.
    # Fill 5: as at p50 (0.70, nothing traded in between): cost 14.36472, PnL 0.63528.
    # Expected PnL: 20.0064 + 11.09692 - 5.59901 + 0.63528 = 26.13959; versus the target
    #   26.13959 - 105.7 = -79.56041. Fees 0.9936 + 0.71428 + 0.46701 + 0.16472 = 2.33961;
    #   volume 54 + 43.5538 + 33.358 + 14.2 = 145.1118.
    # Equity: -54.9936 + 100 x 0.53 = -1.9936; -99.26168 + 173.82 x 0.58 (100.8156) =
    #   1.55392; -66.37069 + 122.50 x 0.66 (80.85) = 14.47931; -80.73541 + 142.50 x 0.70
    #   (99.75) = 19.01459; the end 26.13959: max drawdown 1.9936. Capital needed 99.26168
    #   (54.9936 + 44.26808, after fill 2).
    assert report["p95"] == {
        "delay_ms": 65000, "copies": 4, "exits": 0, "skips": 1,
        "skips_by_reason": {"below_min_target_trade": 1},
        "expected_pnl_usdc": "26.13959", "versus_target_usdc": "-79.56041",
        "fees_usdc": "2.33961", "volume_usdc": "145.1118", "max_drawdown_usdc": "1.9936",
        "capital_needed_usdc": "99.26168"}

    # What we could not copy (at p50): fill 2 too fast (the target made 60 on it), fill 3
    # too small (1.2): 61.2 of 105.7 = 0.5789971... -> 0.578997.
    assert report["uncopyable"] == {
        "too_fast": {"fills": 1, "target_pnl_usdc": "60"},
        "too_small": {"fills": 1, "target_pnl_usdc": "1.2"},
        "too_illiquid": {"fills": 0, "target_pnl_usdc": "0"},
        "target_pnl_usdc": "61.2", "share": "0.578997"}

    # Reliability: 5 fills, 3 copies, all in one market (its share 1). The bootstrap:
    # 1000 resamples of the three copies' PnL (21.0036, -2.62267, 0.63528) with
    # random.Random(30), each three draws with replacement; the 50th and 950th smallest
    # totals (nearest rank).
    parts = [D("21.0036"), D("-2.62267"), D("0.63528")]
    rng = random.Random(30)
    totals = []
    for _ in range(1000):
        total = D(0)
        for _ in range(3):
            total += parts[rng.randrange(3)]
        totals.append(total)
    totals.sort()
    reliability = report["reliability"]
    assert reliability == {
        "fills": 5, "copies": 3,
        "markets": [{"market_slug": five_fills["slug"], "copies": 3,
                     "pnl_usdc": "19.01621", "share": "1"}],
        "top_market_share": "1",
        "bootstrap": {"level": "90%", "seed": 30, "resamples": 1000,
                      "low_usdc": str(totals[49].normalize()),
                      "high_usdc": str(totals[949].normalize())}}
    assert report["rules"]["size_multiplier"] == "0.5"


def test_a_config_of_the_caller_and_bad_questions(client, auth_headers, api_key, user,
                                                  five_fills, set_settings):
    # Four questions below queue at once: more than a user's default reports in flight.
    set_settings(copyability_in_flight=4)
    address = five_fills["target"]
    preview = client.post("/api/configs/preview", json={
        "target_address": address, **RULES}, headers=auth_headers)
    assert preview.status_code == 200, preview.get_json()
    created = client.post("/api/configs", json={"preview_id": preview.get_json()["preview_id"]},
                          headers=auth_headers)
    assert created.status_code == 201, created.get_json()
    by_config = _ask(client, auth_headers, address, {
        "window": "7d", "config_id": created.get_json()["id"], **DELAYS})
    assert by_config.status_code == 202, by_config.get_json()
    run_queued_jobs(only={"copyability.report"})
    # The same rules given inline are the same question: answered from that report.
    inline = _ask(client, auth_headers, address, {"window": "7d", "rules": RULES, **DELAYS})
    assert inline.status_code == 200
    assert inline.get_json()["id"] == by_config.get_json()["id"]
    assert inline.get_json()["report"]["p50"]["expected_pnl_usdc"] == "19.01621"
    # The cache is per (address, window, rules): another rule or window is another report.
    for body in ({"window": "7d", "rules": {**RULES, "size_multiplier": "0.25"}, **DELAYS},
                 {"window": "30d", "rules": RULES, **DELAYS},
                 {"window": "7d", "rules": RULES, "delay_p50_ms": 6000,
                  "delay_p95_ms": 65000}):
        other = _ask(client, auth_headers, address, body)
        assert other.status_code == 202, (body, other.get_json())
        assert other.get_json()["id"] != by_config.get_json()["id"]
    # The dashboard's config preview asks with the previewed fields: the same question.
    from services.copying import copyability_reports

    done, shown = copyability_reports.request(user, address, {
        "window": "7d", "preview_id": preview.get_json()["preview_id"], **DELAYS})
    assert done and str(shown["id"]) == by_config.get_json()["id"]

    def refused(body: dict[str, Any], field: str, where: str = address) -> None:
        answer = _ask(client, auth_headers, where, body)
        assert answer.status_code == 400, answer.get_json()
        assert answer.get_json()["code"] == "validation_failed"
        assert field in answer.get_json()["fields"], answer.get_json()

    refused({"window": "1y", "rules": RULES}, "window")
    refused({"window": "7d"}, "rules")
    refused({"rules": RULES, "config_id": created.get_json()["id"]}, "rules")
    refused({"rules": {"max_position_usdc": "100"}}, "rules.size_multiplier")
    refused({"rules": {**RULES, "min_price": "0.9", "max_price": "0.2"}}, "rules.min_price")
    refused({"config_id": "not-a-config"}, "config_id")
    refused({"rules": RULES, "delay_p50_ms": -1}, "delay_p50_ms")
    refused({"rules": RULES, "delay_p50_ms": 9000, "delay_p95_ms": 10}, "delay_p95_ms")
    refused({"rules": RULES}, "address", where="0xnot-an-address")
    other = _ask(client, {"Authorization": f"Bearer {api_key('read:account')}"}, address,
                 {"rules": RULES})
    assert other.status_code == 403 and other.get_json()["code"] == "scope_required"
    missing = client.get(f"/api/traders/{address}/copyability/{'0' * 8}-0000-0000-0000-"
                         f"{'0' * 12}", headers=auth_headers)
    assert missing.status_code == 404


def test_measured_delays_need_twenty_copies(bound_db, user):
    from models.copying import CopyConfig, CopyIntent
    from services.copying import copyability_reports

    assert copyability_reports.measured_delays() == {
        "p50_ms": 2000, "p95_ms": 25000, "source": "default", "samples": 0}
    config = CopyConfig.create(user=user, target_address=_address(), size_multiplier=1,
                               max_position_usdc=10, price_deviation_bps=100)
    for number in range(1, 21):  # 100, 200, ... 2000 ms
        CopyIntent.create(config=config, user_id=user.id, target_trade_key=f"k{number}",
                          target_address=config.target_address, token_id="1",
                          status="skipped", seen_at=config.created_at,
                          detection_delay_ms=number * 100)
    # Nearest rank over 20: p50 the 10th (1000 ms), p95 the 19th (1900 ms).
    assert copyability_reports.measured_delays() == {
        "p50_ms": 1000, "p95_ms": 1900, "source": "measured", "samples": 20}
