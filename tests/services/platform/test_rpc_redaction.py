"""An RPC URL's key (path, query, userinfo) never reaches an error body or a log line."""

from __future__ import annotations

import logging
from http.server import BaseHTTPRequestHandler

import pytest

import config
from chain.errors import ChainUnavailable
from chain.rpc import connect
from chain.urls import redact_url
from services.platform import runtime, wiring
from tests.conftest import app_settings, free_port
from tests.local_http import serving

KEY = "pk7Qz1sEcReTrpcKeyZ9"  # short enough that no generic log pattern would catch it


class Refuses(BaseHTTPRequestHandler):
    """A provider that refuses the key: 401, quoting the path back like real providers do."""

    def do_POST(self) -> None:
        body = f'{{"error": "invalid key at {self.path}"}}'.encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def keyed_urls(base: str) -> list[str]:
    host = base.removeprefix("http://")
    return [f"{base}/polygon/{KEY}", f"{base}/rpc?apikey={KEY}",
            f"http://user:{KEY}@{host}/"]


def test_redact_url_keeps_only_scheme_host_and_port() -> None:
    assert redact_url(f"https://polygon.example:8443/v2/{KEY}?x=1") == (
        "https://polygon.example:8443/***")
    assert redact_url("http://127.0.0.1:8545") == "http://127.0.0.1:8545"
    assert KEY not in redact_url(f"https://u:{KEY}@polygon.example/")


def test_chain_errors_never_quote_the_key() -> None:
    with serving(Refuses) as base:
        for url in keyed_urls(base):
            with pytest.raises(ChainUnavailable) as caught:
                connect(url, timeout=2).eth.chain_id  # noqa: B018 - the call is the probe
            assert KEY not in str(caught.value) and "HTTP 401" in str(caught.value)
            assert caught.value.__cause__ is None and caught.value.__suppress_context__
    closed = f"http://127.0.0.1:{free_port()}"
    for url in keyed_urls(closed):
        with pytest.raises(ChainUnavailable) as caught:
            connect(url, timeout=2).eth.chain_id  # noqa: B018
        assert KEY not in str(caught.value) and "unreachable" in str(caught.value)


@pytest.mark.parametrize("kind", ["refused", "closed"])
def test_api_error_body_and_logs_never_hold_the_key(app, client, auth_headers, user,
                                                    captured, kind) -> None:
    previous = runtime.runtime()

    def check(url: str) -> None:
        settings = config.load(env={}, overrides={**app_settings(app).flat(),
                                                  "POLYGON_RPC_URL": url,
                                                  "POLYGON_RPC_TIMEOUT": "2"})
        runtime.install(wiring.build_runtime(settings))
        response = client.get("/api/wallets/balance", headers=auth_headers)
        assert response.status_code == 503, response.get_data(as_text=True)
        assert KEY not in response.get_data(as_text=True)

    try:
        if kind == "refused":
            with serving(Refuses) as base:
                for url in keyed_urls(base):
                    check(url)
        else:
            for url in keyed_urls(f"http://127.0.0.1:{free_port()}"):
                check(url)
        # the chain error is logged (with its traceback) somewhere on the way: never the key
        logging.getLogger("test").warning("provider said: %s", f"/polygon/{KEY}")
    finally:
        runtime.install(previous)
    text = captured.getvalue()
    assert "provider said" in text
    assert KEY not in text
