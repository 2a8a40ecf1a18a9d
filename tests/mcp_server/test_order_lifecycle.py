"""MCP: a failed venue trade is visible in ``list_trades`` (status and settlement)."""

from __future__ import annotations

from datetime import timedelta

from jsonschema import Draft202012Validator
from mcp import Client

from services.trading import order_reconcile, orders, previews
from tests.mcp_server.conftest import run_client
from tests.venue_lifecycle import fail_next_trade


def test_list_trades_shows_a_failed_settlement(mcp_url, trader_key, trader, market,
                                               venue_control, venue_clock):
    fail_next_trade(venue_control)
    quote = previews.create(trader.user, market.yes, "buy", "10", "market")
    placed = orders.place_order(trader.user, token_id=market.yes, side="buy", size="10",
                                order_type="market", preview_id=quote["preview_id"])
    venue_clock.advance(3)
    order_reconcile.reconcile_pending(older_than=timedelta(0))
    token = trader_key("read:trades")

    async def body(client: Client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        return listed["list_trades"], await client.call_tool("list_trades", {"limit": 5})

    tool, result = run_client(mcp_url, token, "auto", body)
    assert not result.is_error, result.structured_content
    assert not list(Draft202012Validator(tool.output_schema).iter_errors(
        result.structured_content))
    [trade] = result.structured_content["trades"]
    assert trade["id"] == str(placed.id)  # the Trade shares its Order's id
    assert (trade["status"], trade["settlement"], trade["failed_size"]) == (
        "failed", "failed", "10")
