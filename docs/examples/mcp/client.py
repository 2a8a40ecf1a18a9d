"""Call copytrade's MCP tools with the official Python SDK (pip install mcp).

Run: COPYTRADE_KEY=svck_live_... python client.py
"""

import asyncio
import os

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL = os.environ.get("COPYTRADE_URL", "http://127.0.0.1:8000") + "/api/mcp"
KEY = os.environ["COPYTRADE_KEY"]


async def main() -> None:
    # mcp 2.x takes no headers= argument: headers go on the HTTP client you hand it.
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"},
                              timeout=httpx2.Timeout(30, read=120))
    async with http, Client(streamable_http_client(URL, http_client=http)) as client:
        tools = await client.list_tools()
        print("tools:", ", ".join(tool.name for tool in tools.tools))
        summary = await client.call_tool("get_user_summary", {})
        print(summary.content[0].text)


asyncio.run(main())
