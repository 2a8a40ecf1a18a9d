"""MCP ``place_market_order`` across a venue version bump: one tool call, the stale order
rebuilt for the new version and sent once more, one order record holding what went out."""

from __future__ import annotations

import uuid
from decimal import Decimal

from models.trading import Order
from services.platform import order_versions, venues
from tests.mcp_server.conftest import run_client


def test_a_placed_order_follows_a_version_bump(mcp_url, trader_key, trader, market,
                                               venue_control, version_bump):
    token = trader_key("trade:execute", "read:trades")
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    order_versions.ensure_read()
    version_bump(3)

    async def body(client):
        quote = await client.call_tool("preview_market_order", order)
        return await client.call_tool("place_market_order", {
            **order, "preview_id": quote.structured_content["preview_id"],
            "idempotency_key": str(uuid.uuid4())})

    placed = run_client(mcp_url, token, "auto", body)
    assert not placed.is_error, placed.structured_content
    assert placed.structured_content["status"] == "filled"
    assert Decimal(placed.structured_content["filled_size"]) == Decimal(10)
    sent = [e for e in venue_control.received_orders()
            if e["body"]["order"]["maker"].lower() == trader.maker.lower()]
    assert [(e["status"], e.get("error")) for e in sent] == [
        (400, "order_version_mismatch"), (200, None)]
    [record] = Order.select().where(Order.user == trader.user.id)
    assert record.order_hash == sent[1]["order_id"] == placed.structured_content["order_id"]
    assert venues.order_version().value == 3
