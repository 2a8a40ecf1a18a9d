"""MCP on a market with a taker fee: the preview shows the fee, the trade carries what the
venue charged."""

from __future__ import annotations

import uuid
from decimal import Decimal

from models.trading import Order, Trade
from tests.mcp_server.conftest import run_client


def test_preview_shows_the_fee_and_the_trade_carries_the_charge(
        mcp_url, trader_key, trader, make_sandbox_market, venue_control):
    market = make_sandbox_market(fee_rate="0.0725")
    token = trader_key("trade:execute", "read:trades")
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    before = Decimal(str(venue_control.balances(trader.maker)["pusd"]))

    async def body(client):
        quote = await client.call_tool("preview_market_order", order)
        placed = await client.call_tool("place_market_order", {
            **order, "preview_id": quote.structured_content["preview_id"],
            "idempotency_key": str(uuid.uuid4())})
        return quote, placed

    quote, placed = run_client(mcp_url, token, "auto", body)
    assert Decimal(quote.structured_content["fee"]) == Decimal("0.18118")
    assert placed.structured_content["status"] == "filled", placed.structured_content
    [record] = Order.select().where(Order.user == trader.user.id)
    charged = (before - Decimal(str(venue_control.balances(trader.maker)["pusd"]))
               - record.filled_value)
    assert charged == Decimal("0.18118")
    assert record.fee == Trade.get(Trade.order == record.id).fee == charged
