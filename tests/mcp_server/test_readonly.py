"""The read-only endpoint /mcp/readonly (also at /api/mcp/readonly): read tools only, whatever
the credential holds."""

from __future__ import annotations

import uuid

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from schemas.vocabulary import SCOPES
from tests.mcp_server.conftest import run_client
from tests.mcp_server.test_sdk_client import READ_TOOLS
from tests.mcp_server.test_write_tools import orders_for


@pytest.mark.parametrize("path", ["/api/mcp/readonly", "/mcp/readonly"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_lists_and_serves_read_tools_and_refuses_a_write_even_with_trade_execute(
        mode, path, live_server, trader_key, trader, market, venue_control):
    token = trader_key(*SCOPES)
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}

    async def quote(client: Client) -> dict:
        preview = await client.call_tool("preview_market_order", order)
        return {**order, "preview_id": preview.structured_content["preview_id"],
                "idempotency_key": str(uuid.uuid4())}

    placing = run_client(f"{live_server}/api/mcp", token, mode, quote)

    async def body(client: Client):
        listed = {t.name for t in (await client.list_tools()).tools}
        read = await client.call_tool("get_market_details", {"token_id": market.yes})
        refused = []
        for name, args in (("place_market_order", placing),
                           ("preview_market_order", order),
                           ("claim_positions", {"idempotency_key": str(uuid.uuid4())})):
            try:
                await client.call_tool(name, args)
            except MCPError as err:
                refused.append((err.error.code, err.error.message))
        return listed, read, refused

    listed, read, refused = run_client(f"{live_server}{path}", token, mode, body)
    assert listed == set(READ_TOOLS)
    assert not read.is_error
    assert refused == [(-32602, "Unknown tool: place_market_order."),
                       (-32602, "Unknown tool: preview_market_order."),
                       (-32602, "Unknown tool: claim_positions.")]
    assert orders_for(venue_control, trader.maker) == []
