"""Run the sandbox venue: in a background thread (tests, `copytrade up`) or in the foreground."""

from __future__ import annotations

import contextlib
import io
import logging
import socket
import struct
import sys
import threading
import time
from typing import Any

from flask import Flask
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from devstack.venue import snapshot
from devstack.venue.app import create_sandbox_app
from devstack.venue.config import SandboxConfig
from devstack.venue.market_ws import MARKET_WS_PATH
from devstack.venue.state import SandboxState

log = logging.getLogger(__name__)


class _RequestStream:
    """A connection's input as the handler reads it, refusing werkzeug's after-answer drain.

    After each answer werkzeug reads whatever the client sent next and throws it away (it
    expects to close the connection). On a kept-alive connection that is the next request,
    so while the current request's body has been read in full, ``read`` answers nothing;
    request lines and headers are read with ``readline`` and pass through.
    """

    def __init__(self, raw: Any, handler: PolyHeaderRequestHandler) -> None:
        self.raw = raw
        self._handler = handler

    def read(self, size: int = -1) -> bytes:
        if self._handler.keep_alive:
            return b""
        return self.raw.read(size)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


# Linux's SO_TIMESTAMPNS (= SCM_TIMESTAMPNS): the kernel stamps each received segment.
_SO_TIMESTAMPNS = 35 if sys.platform == "linux" else None


class _StampedSocketIO(io.RawIOBase):
    """A connection's bytes, noting when the kernel received the first of each request.

    A request's arrival is when its bytes reached the venue's socket, not when one of the
    venue's threads next got the interpreter to look at them: under a burst of orders the
    sandbox's own threads (signature checks, matching) would otherwise delay the stamp.
    """

    def __init__(self, sock: socket.socket, handler: PolyHeaderRequestHandler) -> None:
        super().__init__()
        self._sock = sock
        self._handler = handler

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size, ancillary, _, _ = self._sock.recvmsg_into([buffer], 64)
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(data) >= 16:
                seconds, nanoseconds = struct.unpack("qq", data[:16])
                if self._handler.arrived_at is None:
                    self._handler.arrived_at = seconds + nanoseconds / 1e9
        return size


class PolyHeaderRequestHandler(WSGIRequestHandler):
    """Werkzeug's handler with Polymarket's underscore headers and HTTP/1.1 keep-alive.

    Werkzeug drops headers with underscores; Polymarket's auth headers all have them.
    Werkzeug also closes every connection after one answer (http.server cannot skip an
    unread body before the next request); the real venue keeps connections open, and a
    new connection (and server thread) per request would dominate what a latency benchmark
    measures. So a plain HTTP/1.1 request's body is read in full up front and the
    connection stays open; websocket upgrades and chunked bodies still close it.
    """

    timeout = 120  # an idle kept-alive connection is dropped after this many seconds
    keep_alive = False
    arrived_at: float | None = None  # kernel receive time of this request's first bytes

    def handle_one_request(self) -> None:
        self.keep_alive = False
        self.arrived_at = None
        super().handle_one_request()

    def log_error(self, format: str, *args: Any) -> None:
        """http.server's error line, but not for a kept-alive connection left idle past
        ``timeout``: closing it is how keep-alive ends, not an error for the terminal."""
        if format.startswith("Request timed out"):
            return
        super().log_error(format, *args)

    def make_environ(self):
        environ = super().make_environ()
        # The venue's receive time: when the kernel got the request's first bytes (now,
        # with the line and headers read, where the platform cannot say).
        environ["sandbox.received_at"] = self.arrived_at or time.time()
        for key, value in self.headers.items():
            if "_" in key:
                environ["HTTP_" + key.upper().replace("-", "_")] = value
        self.keep_alive = False
        connection = self.headers.get("Connection", "").lower()
        if (self.request_version == "HTTP/1.1" and "close" not in connection
                and "upgrade" not in connection
                and "wsgi.input_terminated" not in environ):  # not a chunked body
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = self.rfile.raw.read(length) if length > 0 else b""
            environ["wsgi.input"] = io.BytesIO(body)
            self.keep_alive = True
        return environ

    def send_header(self, keyword: str, value: str) -> None:
        if keyword.lower() == "connection" and value.lower() == "close" and self.keep_alive:
            return  # the body was read in full: the next request can follow
        super().send_header(keyword, value)

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes: without TCP_NODELAY, Nagle holds the
        # body until the client's delayed ACK of the headers (up to 40 ms per answer).
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # The socket's own file stays open until ``finish``: it holds the socket's fd open
        # after a websocket handler closes the socket, so werkzeug's closing write fails
        # quietly, as it did before the stamping reader took over reading.
        self._socket_file = reader = self.rfile
        if _SO_TIMESTAMPNS is not None:
            with contextlib.suppress(OSError):
                self.connection.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
                reader = io.BufferedReader(_StampedSocketIO(self.connection, self))
        self.rfile = _RequestStream(reader, self)  # type: ignore[assignment]
        self.server.open_connections.add(self.connection)  # type: ignore[attr-defined]

    def finish(self) -> None:
        self.server.open_connections.discard(self.connection)  # type: ignore[attr-defined]
        try:
            super().finish()
        finally:
            self._socket_file.close()

    def log_request(self, code="-", size="-") -> None:
        # Per-request logging costs time the latency benchmark would measure.
        return None


def free_port(host: str = "127.0.0.1") -> int:
    """An unused TCP port on host."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


class SandboxServer:
    """The sandbox venue served on host:port from a background thread."""

    def __init__(
        self,
        app: Flask | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        seed: int = 0,
        whales: bool = False,
        config: SandboxConfig | None = None,
    ) -> None:
        self.app = app or create_sandbox_app(seed=seed, whales=whales, config=config)
        self.host = host
        self._server: BaseWSGIServer = make_server(
            host, port, self.app, threaded=True, request_handler=PolyHeaderRequestHandler
        )
        self._server.open_connections = set()  # type: ignore[attr-defined]
        self.port = self._server.server_port
        self._thread: threading.Thread | None = None

    @property
    def state(self) -> SandboxState:
        """The venue state behind the app."""
        return self.app.extensions["sandbox_state"]

    @property
    def url(self) -> str:
        """Base URL, e.g. http://127.0.0.1:5123 (APIs live under /gamma, /clob, /data)."""
        return f"http://{self.host}:{self.port}"

    @property
    def gamma_url(self) -> str:
        """POLYMARKET_GAMMA_URL for this venue."""
        return f"{self.url}/gamma"

    @property
    def clob_url(self) -> str:
        """POLYMARKET_CLOB_URL for this venue (the ClobClient host)."""
        return f"{self.url}/clob"

    @property
    def data_url(self) -> str:
        """POLYMARKET_DATA_URL for this venue."""
        return f"{self.url}/data"

    @property
    def relayer_url(self) -> str:
        """The relayer's base URL (POST /submit and friends) for this venue."""
        return f"{self.url}/relayer"

    @property
    def rtds_url(self) -> str:
        """POLYMARKET_RTDS_URL for this venue."""
        return f"ws://{self.host}:{self.port}/rtds"

    @property
    def market_ws_url(self) -> str:
        """The CLOB market channel of this venue (derived from the CLOB URL by clients)."""
        return f"ws://{self.host}:{self.port}{MARKET_WS_PATH}"

    @property
    def control_url(self) -> str:
        """Base of the sandbox-only control API."""
        return f"{self.url}/_sandbox"

    def start(self) -> SandboxServer:
        """Serve in a daemon thread; returns self."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"sandbox-venue-{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop whales, close websockets, stop serving and free the port."""
        self.app.extensions["sandbox_whales"].stop()
        self.app.extensions["sandbox_lifespans"].stop()
        self.state.feed.close_all()
        self.state.market_channel.close_all()
        self._server.shutdown()
        self._server.server_close()
        # Kept-alive connections would keep answering after the stop: end them too.
        for connection in list(self._server.open_connections):  # type: ignore[attr-defined]
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


def serve(host: str = "127.0.0.1", port: int = 8010, *, seed: int = 0,
          whales: bool = True, state_file: str | None = None) -> None:
    """Serve the sandbox venue in the foreground until interrupted (`copytrade sandbox`);
    with ``state_file``, start from the snapshot there and write it again on the way out
    (and whenever ``POST /_sandbox/snapshot`` asks)."""
    # The venue's own process: hand the GIL between request threads every 0.5 ms (not 5),
    # so a burst of orders is read (and stamped) as it arrives rather than one by one.
    sys.setswitchinterval(0.0005)
    server = SandboxServer(host=host, port=port, seed=seed, whales=whales)
    if state_file:
        server.app.extensions["sandbox_state_file"] = state_file
        if snapshot.load(server.state, state_file):
            print(f"sandbox venue state loaded from {state_file}", flush=True)
    log.info("sandbox venue on %s (gamma /gamma, clob /clob, data /data, relayer /relayer, "
             "ws /rtds, /ws/market)",
             server.url)
    print(f"sandbox venue listening on {server.url}", flush=True)
    try:
        server._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.app.extensions["sandbox_whales"].stop()
        server.app.extensions["sandbox_lifespans"].stop()
        if state_file:
            snapshot.save(server.state, state_file)
        server.state.feed.close_all()
        server.state.market_channel.close_all()
        server._server.server_close()
