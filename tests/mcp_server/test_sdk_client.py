"""The official MCP Python SDK client against the running app, in legacy and auto modes."""

from __future__ import annotations

import pytest
from mcp import Client

from schemas.vocabulary import SCOPES
from tests.mcp_server.conftest import run_client

MODES = ["legacy", "auto"]

READ_TOOLS = {
    "get_platform_stats": None,
    "get_trading_readiness": "read:account",
    "search_markets": "read:markets",
    "get_market_details": "read:markets",
    "get_market_depth": "read:markets",
    "get_market_price_history": "read:markets",
    "list_top_traders": "read:markets",
    "list_open_positions": "read:positions",
    "list_paper_positions": "read:positions",
    "list_trades": "read:trades",
    "get_user_summary": "read:account",
    "list_copy_configs": "read:account",
    "get_copy_config": "read:account",
    "get_config_pnl": "read:account",
    "get_config_quality": "read:account",
    "get_config_status": "read:account",
    "get_config_trades": "read:trades",
    "suggest_multiplier": "read:markets",
    "list_open_orders": "read:markets",
    "get_trader_profile": "read:markets",
    "get_copyability_report": "read:markets",
    "get_shared_config": "read:markets",
    "list_notifications": "read:account",
}
WRITE_TOOLS = {
    "preview_copy_config": "trade:execute",
    "create_copy_config": "trade:execute",
    "update_copy_config": "trade:execute",
    "start_copying": "trade:execute",
    "stop_copying": "trade:execute",
    "delete_copy_config": "trade:execute",
    "preview_market_order": "trade:execute",
    "place_market_order": "trade:execute",
    "cancel_order": "trade:cancel",
    "claim_positions": "wallet:write",
}
# Writes whose idempotency key is optional (marking read twice changes nothing more).
LIGHT_WRITE_TOOLS = {"mark_notifications_read": "trade:execute"}
ALL_TOOLS = {**READ_TOOLS, **WRITE_TOOLS, **LIGHT_WRITE_TOOLS}


def test_the_table_has_the_29_tools_of_the_spec_and_the_issues_tools():
    from blueprints.mcp.tools import TOOLS

    assert {t.name: t.scope for t in TOOLS} == ALL_TOOLS
    # main's 29, update_copy_config (issue 27), get_config_quality, get_config_status and
    # get_copyability_report (issue 30), get_shared_config (issue 45)
    assert len(ALL_TOOLS) == 34


@pytest.mark.parametrize("mode", MODES)
def test_connects_and_negotiates(mode, mcp_url, trader_key):
    key = trader_key("read:markets")

    async def body(client: Client):
        return client.protocol_version, client.server_info

    version, info = run_client(mcp_url, key, mode, body)
    assert version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert info is not None and info.name == "copytrade"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scopes", [
    (), ("read:markets",), ("read:account", "read:trades"), ("trade:cancel",),
    ("wallet:write",), tuple(SCOPES)], ids=lambda s: "+".join(s) or "none")
def test_tools_list_is_exactly_what_the_scopes_permit(mode, scopes, mcp_url, api_key, user):
    # A key needs at least one scope: the "none" case holds only read:positions.
    key = api_key(*(scopes or ("read:positions",)), owner=user)
    held = set(scopes or ("read:positions",))

    async def body(client: Client):
        return (await client.list_tools()).tools

    tools = run_client(mcp_url, key, mode, body)
    expected = {name for name, scope in ALL_TOOLS.items() if scope is None or scope in held}
    assert {t.name for t in tools} == expected
    assert "get_platform_stats" in {t.name for t in tools}
