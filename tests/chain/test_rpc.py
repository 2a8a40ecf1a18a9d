"""RPC transport failures surface as ChainUnavailable, never as raw requests errors."""

from __future__ import annotations

import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from chain.errors import ChainUnavailable
from chain.rpc import connect
from tests.local_http import serving


class _Faulty(BaseHTTPRequestHandler):
    """Answers 503, or stalls past the client's timeout, depending on the path."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/slow":
            time.sleep(1.5)
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def faulty_rpc() -> Iterator[str]:
    with serving(_Faulty) as url:
        yield url


def test_server_errors_are_unavailable(faulty_rpc: str) -> None:
    with pytest.raises(ChainUnavailable, match="503") as caught:
        connect(faulty_rpc, check=True)
    assert caught.value.retry_after > 0


def test_timeouts_are_unavailable(faulty_rpc: str) -> None:
    w3 = connect(f"{faulty_rpc}/slow", timeout=0.3)
    with pytest.raises(ChainUnavailable):
        w3.eth.block_number  # noqa: B018


def test_a_live_node_answers(chain) -> None:
    assert connect(chain.rpc_url, check=True).eth.chain_id == chain.chain_id
