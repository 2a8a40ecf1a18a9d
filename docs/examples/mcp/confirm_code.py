"""Place an order with the official SDK; the person confirms it with a code.

For clients that cannot show a form: the first call answers a confirmation code and the
words to show; the person reads them and, if they agree, the call goes again with the code.
Run: COPYTRADE_KEY=svck_live_... TOKEN_ID=... python confirm_code.py
"""

import asyncio
import json
import os
import uuid

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL = os.environ.get("COPYTRADE_URL", "http://127.0.0.1:8000") + "/api/mcp"
KEY = os.environ["COPYTRADE_KEY"]


async def main() -> None:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"},
                              timeout=httpx2.Timeout(30, read=120))
    async with http, Client(streamable_http_client(URL, http_client=http)) as client:
        order = {"token_id": os.environ["TOKEN_ID"], "side": "buy", "size": "10",
                 "order_type": "market"}
        quote = await client.call_tool("preview_market_order", order)
        placing = {**order, "preview_id": quote.structured_content["preview_id"],
                   "idempotency_key": str(uuid.uuid4())}
        asked = await client.call_tool("place_market_order", placing)
        confirmation = asked.structured_content["confirmation"]
        print(confirmation["summary"], flush=True)
        print(f"Confirmation code: {confirmation['code']}", flush=True)
        code = input("Type the code to go ahead (or nothing to stop): ").strip()
        if not code:
            return
        placed = await client.call_tool("place_market_order",
                                        {**placing, "confirmation_code": code})
        print(json.dumps(placed.structured_content))


asyncio.run(main())
