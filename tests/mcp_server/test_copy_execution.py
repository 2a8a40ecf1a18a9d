"""A copy trade's execution quality through the official MCP client (issue 30 item 1):
list_trades, get_config_trades and get_config_status show the target's price, ours, the
signed slippage, each stage's delay, the detection source and the fee, and the SDK
accepts every result against the tool's own output schema (it validates them)."""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import Any

from mcp import Client

from models.base import utcnow
from models.copying import CopyConfig, CopyIntent
from models.trading import Trade
from tests.mcp_server.conftest import run_client

D = Decimal
STAGES = {"detection_ms": 1200, "decision_ms": 3, "placement_ms": 4, "ack_ms": 40,
          "settlement_ms": 2, "taker_delay_ms": None}


def _copy(user: Any) -> tuple[CopyConfig, Trade]:
    """A live config with one copied buy (its ledger row confirmed on chain, 1 of its 10
    shares failed) and one skipped target trade."""
    target = "0x" + secrets.token_hex(20)
    config = CopyConfig.create(user=user.id, target_address=target, size_multiplier=D(1),
                               max_position_usdc=D(100), price_deviation_bps=500,
                               paper_trading=False, is_active=False, blocked_categories="[]")
    now = utcnow()
    trade = Trade.create(user=user.id, token_id="7", market_slug="m", side="buy",
                         requested_size=D(10), price=D("0.53"), status="filled",
                         filled_size=D(9), filled_value=D("4.59"), fee=D("0.02"),
                         latency_ms=49, config_id=config.id, filled_at=now,
                         settlement="confirmed", failed_size=D(1), settled_at=now)
    tx = "0x" + secrets.token_hex(32)
    CopyIntent.create(
        config=config.id, user_id=user.id, target_trade_key=f"{tx}|7|BUY|{target}",
        target_address=target, target_side="BUY", target_size=D(20), target_price=D("0.5"),
        target_tx_hash=tx, token_id="7", status="filled", side="BUY", size=D(10),
        price=D("0.53"), trade_id=trade.id, filled_size=D(9), filled_price=D("0.51"),
        fee=D("0.02"), slippage_bps=D("200.00"), detection_source="chain", seen_at=now,
        settled_at=now, latency_ms=49, detection_delay_ms=1200, decision_ms=3,
        placement_ms=4, ack_ms=40, settlement_ms=2)
    CopyIntent.create(
        config=config.id, user_id=user.id, target_trade_key=f"0x{'ab' * 32}|7|BUY|{target}",
        target_address=target, target_side="BUY", target_size=D(2), target_price=D("0.5"),
        token_id="7", status="skipped", reason="below_min_size", seen_at=now,
        detection_source="feed", detection_delay_ms=900)
    return config, trade


def test_a_copy_trade_shows_its_execution_on_every_tool(trader, mcp_url, trader_key):
    config, trade = _copy(trader.user)
    key = trader_key("read:trades", "read:account")

    async def body(client: Client):
        return {name: await client.call_tool(name, arguments) for name, arguments in (
            ("list_trades", {"config_id": str(config.id)}),
            ("get_config_trades", {"config_id": str(config.id)}),
            ("get_config_status", {"config_id": str(config.id)}))}

    results = run_client(mcp_url, key, "auto", body)
    for name, result in results.items():
        assert not result.is_error, (name, result.structured_content)
    execution = {"source": "chain", "target_price": "0.5", "price": "0.51",
                 "slippage_bps": "200", "fee": "0.02", "stages": STAGES}
    [listed] = results["list_trades"].structured_content["trades"]
    assert listed["id"] == str(trade.id) and listed["execution"] == execution
    copied, skipped = results["get_config_trades"].structured_content["trades"]
    if copied["decision"] == "skipped":  # created in one moment: either order
        copied, skipped = skipped, copied
    assert copied["execution"] == execution
    # A live copy's decision carries its ledger row's settlement, as the trade does.
    assert (copied["settlement"], copied["failed_size"]) == ("confirmed", "1")
    assert copied["settled_at"] == listed["settled_at"]
    assert (skipped["reason"], skipped["failed_size"], skipped["settlement"]) == (
        "below_min_size", "0", None)
    assert skipped["execution"]["source"] == "feed"
    assert skipped["execution"]["stages"]["detection_ms"] == 900
    status = results["get_config_status"].structured_content
    assert status["config_id"] == str(config.id) and status["executor_running"] is False
    assert status["fills_last_hour"] == 1 and status["skips_last_hour"] == 1
    # No engine runs it: nothing detects its target, and the status says so.
    assert status["detection"] is None and status["polls_per_minute"] is None
