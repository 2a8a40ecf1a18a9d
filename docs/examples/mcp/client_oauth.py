"""Sign in an agent with OAuth, then call copytrade's MCP tools (official `mcp` SDK).

Run: python client_oauth.py. It prints a sign-in address: open it, sign in and allow the
agent; your browser then lands on http://127.0.0.1:8765/callback?code=... (nothing answers
there, that is fine): copy that address from the address bar and paste it here.
"""

import asyncio
import os
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

URL = os.environ.get("COPYTRADE_URL", "http://127.0.0.1:8000") + "/api/mcp"
REDIRECT = "http://127.0.0.1:8765/callback"


class Memory:
    """Where the SDK keeps the client's registration and tokens (a file or keyring in a
    real agent, so the next run needs no sign-in)."""

    tokens = client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


async def show(url: str) -> None:
    print(f"Open this address to sign in: {url}", flush=True)


async def pasted() -> AuthorizationCodeResult:
    answer = await asyncio.to_thread(input, "Paste the address you were sent to: ")
    query = {name: values[0] for name, values in parse_qs(urlsplit(answer).query).items()}
    return AuthorizationCodeResult(code=query["code"], state=query.get("state"),
                                   iss=query.get("iss"))


async def main() -> None:
    # The provider answers the server's 401: it finds the authorization server, registers
    # this client, has you sign in (show, then pasted), and refreshes the token when due.
    auth = OAuthClientProvider(
        server_url=URL, storage=Memory(), redirect_handler=show, callback_handler=pasted,
        client_metadata=OAuthClientMetadata(
            client_name="My agent", redirect_uris=[REDIRECT], response_types=["code"],
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="none"))
    http = httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=120))
    async with http, Client(streamable_http_client(URL, http_client=http)) as client:
        tools = await client.list_tools()
        print("\ntools:", ", ".join(tool.name for tool in tools.tools), flush=True)


asyncio.run(main())
