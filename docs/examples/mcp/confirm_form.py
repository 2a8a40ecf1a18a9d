"""Place an order with the official SDK; the person confirms it in a form (elicitation).

Run: COPYTRADE_KEY=svck_live_... TOKEN_ID=... python confirm_form.py
With MCP_MODE=legacy the client speaks protocol 2025-11-25 instead: the server then asks
with a server request on the call's own stream, and the SDK answers it the same way.
"""

import asyncio
import json
import os
import uuid

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ElicitResult

URL = os.environ.get("COPYTRADE_URL", "http://127.0.0.1:8000") + "/api/mcp"
KEY = os.environ["COPYTRADE_KEY"]
MODE = os.environ.get("MCP_MODE", "auto")  # auto: 2026-07-28 here; legacy: 2025-11-25


async def ask_the_person(context, params) -> ElicitResult:
    # A desktop app draws a form from params.requested_schema; a terminal asks a question.
    print(params.message, flush=True)
    answer = input("Do it? [yes/no] ").strip().lower()
    if answer != "yes":
        return ElicitResult(action="decline")
    return ElicitResult(action="accept", content={"confirm": True})


async def main() -> None:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"},
                              timeout=httpx2.Timeout(30, read=120))
    # With an elicitation callback the client declares the capability, and the server
    # asks through it; the SDK sends the answer back and retries the call for you.
    async with http, Client(streamable_http_client(URL, http_client=http), mode=MODE,
                            elicitation_callback=ask_the_person) as client:
        order = {"token_id": os.environ["TOKEN_ID"], "side": "buy", "size": "10",
                 "order_type": "market"}
        quote = await client.call_tool("preview_market_order", order)
        placed = await client.call_tool("place_market_order", {
            **order, "preview_id": quote.structured_content["preview_id"],
            "idempotency_key": str(uuid.uuid4())})
        print(json.dumps(placed.structured_content))


asyncio.run(main())
