"""MCP ``preview_market_order`` / ``place_market_order`` with ``post_only``: a resting limit
order goes through the venue's post-only window after a restart."""

from __future__ import annotations

import uuid

from models.trading import Order
from tests.mcp_server.conftest import run_client


def test_a_post_only_limit_order_rests_in_the_post_only_window(mcp_url, trader_key, trader,
                                                               market, venue_control):
    token = trader_key("trade:execute")
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "limit",
             "price": "0.40", "post_only": True}
    venue_control.call("POST", "/restart", {"seconds": 0, "post_only_seconds": 60},
                       expect=201)
    try:
        async def body(client):
            quote = await client.call_tool("preview_market_order", order)
            assert quote.structured_content["post_only"] is True, quote.structured_content
            return await client.call_tool("place_market_order", {
                **order, "preview_id": quote.structured_content["preview_id"],
                "idempotency_key": str(uuid.uuid4())})

        placed = run_client(mcp_url, token, "auto", body)
    finally:
        venue_control.call("POST", "/mode", {"mode": "open"}, expect=200)
    assert not placed.is_error, placed.structured_content
    assert placed.structured_content["status"] == "accepted"
    [sent] = [e for e in venue_control.received_orders()
              if e["order_id"] == placed.structured_content["order_id"]]
    assert sent["body"]["postOnly"] is True and sent["status"] == 200
    assert Order.get(Order.user == trader.user.id).status == "live"
