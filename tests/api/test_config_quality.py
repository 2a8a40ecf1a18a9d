"""Execution quality over known rows: GET /api/configs/{id}/quality (stage percentiles,
slippage, fees, fill ratio, counts), its period's validation, the latency stats' stage
split, and the execution shown on a config's decisions."""

from __future__ import annotations

import secrets
from datetime import timedelta
from decimal import Decimal

from models.base import utcnow
from models.copying import CopyConfig, CopyIntent
from models.user import User
from services.trading.execution_quality import reference_price, slippage_bps
from tests.http_helpers import json_body


def _config(user: User) -> CopyConfig:
    return CopyConfig.create(user=user.id, target_address="0x" + secrets.token_hex(20),
                             size_multiplier=Decimal(1), max_position_usdc=Decimal(100),
                             price_deviation_bps=500, paper_trading=True, is_active=False,
                             blocked_categories="[]")


def _intent(config: CopyConfig, status: str, *, hours_ago: float = 1, **fields) -> CopyIntent:
    at = utcnow() - timedelta(hours=hours_ago)
    return CopyIntent.create(
        config=config.id, user_id=config.user_id, target_trade_key=secrets.token_hex(8),
        target_address=config.target_address, token_id="7", status=status, seen_at=at,
        created_at=at, **fields)


def _filled(config, slippage, fee, stages, **fields):
    detection, decision, placement, ack, settlement = stages
    return _intent(config, "filled", side="BUY", target_price=Decimal("0.5"),
                   filled_size=Decimal(10), filled_price=Decimal("0.51"),
                   slippage_bps=Decimal(slippage), fee=Decimal(fee), detection_source="feed",
                   detection_delay_ms=detection, decision_ms=decision, placement_ms=placement,
                   ack_ms=ack, settlement_ms=settlement, **fields)


def test_quality_over_known_rows(client, auth_headers, user):
    config = _config(user)
    _filled(config, "200", "0.02", (1000, 3, 4, 40, 2))
    _filled(config, "-50", "0.01", (2000, 5, 6, 60, 3))
    _filled(config, "100", "0.03", (3000, 7, 8, 80, 4), taker_delay_ms=5000)
    _intent(config, "failed", reason="order_refused", detection_delay_ms=1500, decision_ms=9,
            placement_ms=10, ack_ms=50)
    _intent(config, "cancelled", reason="not_filled")
    _intent(config, "skipped", reason="odds_band")
    _intent(config, "skipped", reason="odds_band")
    _filled(config, "900", "5", (1, 1, 1, 1, 1), hours_ago=30)  # outside 24 h, inside 7 d

    body = json_body(client.get(f"/api/configs/{config.id}/quality?period=24h",
                            headers=auth_headers))
    assert (body["period"], body["copies"], body["filled"], body["skips"], body["failures"],
            body["unfilled"]) == ("24h", 5, 3, 2, 1, 1)
    assert body["fill_ratio"] == "0.6" and body["fees"] == "0.06"
    # Slippage of the three fills: 200, -50 and 100 bps; mean 83.33, p95 the worst.
    assert body["slippage_bps"] == {"count": 3, "mean": "83.33", "p95": "200", "max": "200"}
    stages = body["stages"]
    # Nearest rank over the four copies that measured detection: 1000, 1500, 2000, 3000.
    assert stages["detection"] == {"count": 4, "p50_ms": 1500, "p95_ms": 3000,
                                   "max_ms": 3000}
    assert stages["ack"] == {"count": 4, "p50_ms": 50, "p95_ms": 80, "max_ms": 80}
    assert stages["settlement"] == {"count": 3, "p50_ms": 3, "p95_ms": 4, "max_ms": 4}
    assert stages["taker_delay"] == {"count": 1, "p50_ms": 5000, "p95_ms": 5000,
                                     "max_ms": 5000}
    assert body["histogram"] == [{"from_bps": -50, "to_bps": -25, "count": 1},
                                 {"from_bps": 100, "to_bps": 125, "count": 1},
                                 {"from_bps": 200, "to_bps": 225, "count": 1}]
    assert [p["slippage_bps"] for p in body["points"]] == ["200", "-50", "100"]

    week = json_body(client.get(f"/api/configs/{config.id}/quality?period=7d",
                            headers=auth_headers))
    assert (week["copies"], week["filled"], week["fees"]) == (6, 4, "5.06")
    assert week["slippage_bps"]["max"] == "900"
    assert json_body(client.get(f"/api/configs/{config.id}/quality",
                            headers=auth_headers))["period"] == "24h"


def test_quality_of_a_quiet_config_is_empty_not_an_error(client, auth_headers, user):
    config = _config(user)
    body = json_body(client.get(f"/api/configs/{config.id}/quality?period=30d",
                            headers=auth_headers))
    assert (body["copies"], body["fill_ratio"], body["fees"]) == (0, None, "0")
    assert body["slippage_bps"] == {"count": 0, "mean": None, "p95": None, "max": None}
    assert body["stages"]["ack"] == {"count": 0, "p50_ms": 0, "p95_ms": 0, "max_ms": 0}


def test_a_bad_period_is_a_validation_failure_naming_the_field(client, auth_headers, user):
    config = _config(user)
    response = client.get(f"/api/configs/{config.id}/quality?period=1y", headers=auth_headers)
    assert response.status_code == 400
    body = response.get_json()
    assert body["code"] == "validation_failed" and "period" in body["fields"]


def test_another_users_config_is_not_found_and_a_key_needs_read_account(
        client, auth_headers, user, bound_db):
    other = User.create(email=f"{secrets.token_hex(6)}@example.com")
    config = _config(other)
    response = client.get(f"/api/configs/{config.id}/quality", headers=auth_headers)
    assert response.status_code == 404
    assert client.get(f"/api/configs/{config.id}/quality").status_code == 401


def test_latency_stats_gain_the_stage_split(client, auth_headers, user):
    config = _config(user)
    _filled(config, "10", "0", (900, 2, 3, 30, 1))
    _filled(config, "10", "0", (1100, 4, 5, 50, 2))
    _intent(config, "skipped", reason="odds_band", detection_delay_ms=99999)  # not a copy
    body = json_body(client.get("/api/stats/latency", headers=auth_headers))
    assert body["stages"]["detection"] == {"count": 2, "p50_ms": 900, "p95_ms": 1100,
                                           "max_ms": 1100}
    assert body["stages"]["placement"]["max_ms"] == 5
    assert body["stages"]["taker_delay"]["count"] == 0


def test_decisions_show_each_copys_execution(client, auth_headers, user):
    config = _config(user)
    _filled(config, "200", "0.02", (1000, 3, 4, 40, 2))
    [decision] = json_body(client.get(f"/api/configs/{config.id}/trades", headers=auth_headers))
    assert decision["execution"] == {
        "source": "feed", "target_price": "0.5", "price": "0.51", "slippage_bps": "200",
        "fee": "0.02",
        "stages": {"detection_ms": 1000, "decision_ms": 3, "placement_ms": 4, "ack_ms": 40,
                   "settlement_ms": 2, "taker_delay_ms": None}}


def test_slippage_is_signed_by_side_and_inverse_copies_use_the_other_outcome():
    half = Decimal("0.5")
    assert slippage_bps("BUY", half, Decimal("0.51")) == Decimal("200.00")
    assert slippage_bps("BUY", half, Decimal("0.49")) == Decimal("-200.00")  # better for us
    assert slippage_bps("SELL", half, Decimal("0.49")) == Decimal("200.00")
    assert slippage_bps("SELL", Decimal("0.40"), Decimal("0.41")) == Decimal("-250.00")
    assert slippage_bps("BUY", half, None) is None
    # An inverse copy of a buy of token A at 0.3 buys token B, measured against 0.7.
    key = "0xabc|A|BUY|0xwallet"
    assert reference_price(Decimal("0.3"), key, "B") == Decimal("0.7")
    assert reference_price(Decimal("0.3"), key, "A") == Decimal("0.3")


def test_the_openapi_document_describes_quality_with_an_example(client):
    spec = client.get("/openapi.json").get_json()
    operation = spec["paths"]["/api/configs/{config_id}/quality"]["get"]
    assert [p["name"] for p in operation["parameters"] if p["in"] == "query"] == ["period"]
    answer = operation["responses"]["200"]["content"]["application/json"]
    assert answer["example"]["slippage_bps"]["mean"] == "61.40"
    assert set(answer["example"]["stages"]) == {"detection", "decision", "placement", "ack",
                                                "settlement", "taker_delay"}
