"""The lean HTTP/1.1 pool (venue/http11.py) against a real local server over TCP.

The server is Python's own http.server speaking HTTP/1.1 (kept-alive connections,
Content-Length and chunked answers); the client side is what the worker runs under trio.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import trio

from venue.client import AsyncVenueClient
from venue.config import VenueConfig
from venue.errors import VenueTimeout, VenueUnavailable
from venue.http import Call, VenueRequest
from venue.http11 import Http11Pool


class Answers(BaseHTTPRequestHandler):
    """``json`` (Content-Length), ``chunked``, ``bye`` (then closes), ``slow``; POST echoes."""

    protocol_version = "HTTP/1.1"
    ports: list[int] = []

    def _answer(self, status: int, body: bytes, *, chunked: bool = False,
                close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
        self.end_headers()
        if chunked:
            for start in range(0, len(body), 7):
                part = body[start:start + 7]
                self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.wfile.write(body)

    def do_GET(self) -> None:
        self.ports.append(self.client_address[1])
        name = self.path.split("?")[0].rsplit("/", 1)[-1]  # any prefix (/clob/...) works
        if name == "slow":
            threading.Event().wait(1.0)
        body = json.dumps({"path": self.path, "n": "12.5"}).encode()
        self._answer(200, body, chunked=name == "chunked", close=name == "bye")

    def do_POST(self) -> None:
        self.ports.append(self.client_address[1])
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self._answer(200, json.dumps({"got": body.decode(),
                                      "key": self.headers.get("POLY_API_KEY")}).encode())

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    server.daemon_threads = True
    Answers.ports = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _pool(**overrides: float) -> Http11Pool:
    options = {"timeout": 0.5, "connect_timeout": 0.5, "max_connections": 4, **overrides}
    return Http11Pool(**options)  # type: ignore[arg-type]


def test_requests_reuse_one_connection_and_read_both_framings(server_url: str) -> None:
    async def main() -> None:
        pool = _pool()
        first = await pool.request("GET", f"{server_url}/json?a=1", {})
        chunked = await pool.request("GET", f"{server_url}/chunked", {})
        posted = await pool.request("POST", f"{server_url}/echo",
                                    {"POLY_API_KEY": "k-1"}, b'{"x":1}')
        await pool.aclose()
        assert first.status_code == 200 and first.json()["path"] == "/json?a=1"
        assert json.loads(chunked.content, parse_float=Decimal)["n"] == "12.5"
        assert "transfer-encoding" not in chunked.headers  # already de-chunked
        assert posted.json() == {"got": '{"x":1}', "key": "k-1"}

    trio.run(main)
    assert len(Answers.ports) == 3 and len(set(Answers.ports)) == 1


def test_a_connection_the_server_closed_is_not_reused(server_url: str) -> None:
    async def main() -> None:
        pool = _pool()
        await pool.request("GET", f"{server_url}/bye", {})
        await pool.request("GET", f"{server_url}/json", {})  # after "Connection: close"
        await pool.request("GET", f"{server_url}/json", {})
        await pool.aclose()

    trio.run(main)
    assert Answers.ports[0] != Answers.ports[1] == Answers.ports[2]


def test_idle_connections_expire(server_url: str) -> None:
    async def main() -> None:
        pool = _pool(keepalive_expiry=0.05)
        await pool.request("GET", f"{server_url}/json", {})
        await trio.sleep(0.1)
        await pool.request("GET", f"{server_url}/json", {})
        await pool.aclose()

    trio.run(main)
    assert len(set(Answers.ports)) == 2


def test_timeouts_and_refused_connections_raise_httpx_errors(server_url: str) -> None:
    async def main() -> None:
        pool = _pool(timeout=0.2)
        with pytest.raises(httpx.ReadTimeout):
            await pool.request("GET", f"{server_url}/slow", {})
        with pytest.raises(httpx.ConnectError):
            await pool.request("GET", "http://127.0.0.1:9/json", {})
        await pool.aclose()

    trio.run(main)


def test_the_async_client_under_trio_uses_it_and_maps_errors(server_url: str) -> None:
    config = VenueConfig.for_sandbox(server_url, timeout=0.2, max_retries=0)

    async def main() -> None:
        async with AsyncVenueClient(config) as client:
            assert client.transport._lean is not None
            assert (await client.transport.run(_call("/chunked")))["n"] == "12.5"
            with pytest.raises(VenueTimeout):
                await client.transport.run(_call("/slow"))
        down = VenueConfig.for_sandbox("http://127.0.0.1:9", timeout=0.2, max_retries=0)
        async with AsyncVenueClient(down) as client:
            with pytest.raises(VenueUnavailable):
                await client.transport.run(_call("/json"))

    trio.run(main)


def _call(path: str) -> Call[object]:
    return Call(VenueRequest("clob", "GET", path, retryable=False), lambda body: body)
