"""MCP ``list_open_positions`` with a Data API v2 position status we do not know
(ACCOUNTS.md §12): the read succeeds, schema-valid, and names the status as it is."""

from __future__ import annotations

from jsonschema import Draft202012Validator
from mcp import Client

from tests.mcp_server.conftest import run_client


def test_an_unknown_position_status_reaches_the_agent_as_it_is(
        trader, market, venue_control, fresh_venue_cache, mcp_url, trader_key):
    venue_control.grant(trader.maker, market.yes, "7")
    venue_control.call("POST", "/list-rules", {"position_status": "FROZEN_FOR_REVIEW"},
                       expect=200)
    try:
        async def body(client: Client):
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return tools, await client.call_tool("list_open_positions", {})

        tools, result = run_client(mcp_url, trader_key("read:positions"), "auto", body)
    finally:
        venue_control.call("POST", "/list-rules", {"position_status": None}, expect=200)
    assert not result.is_error, result.structured_content
    Draft202012Validator(tools["list_open_positions"].output_schema).validate(
        result.structured_content)
    [position] = result.structured_content["positions"]
    assert (position["token_id"], position["size"], position["status"]) == (
        market.yes, "7", "FROZEN_FOR_REVIEW")
    assert position["merge_value"] is None
