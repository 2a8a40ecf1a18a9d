"""A throwaway HTTP server on a free loopback port, for tests that script the answers, and a
handler that answers very slowly."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.conftest import DEADLINE


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``handler`` from a thread for the block on ``host``; yields the base URL."""
    server = ThreadingHTTPServer((host, 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class Dripper:
    """A loopback server that answers one byte every ``pace`` seconds, headers included when
    ``drip_headers``; counts the connections it is holding, and those it let go."""

    def __init__(self, drip_headers: bool, pace: float = 0.5) -> None:
        self.stop = threading.Event()
        self.holding = 0
        self.ended = 0  # connections let go: answered in full, given up by the client, stopped
        self.changed = threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with outer.changed:
                    outer.holding += 1
                    outer.changed.notify_all()
                head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" \
                       b"Content-Length: 64\r\n\r\n"
                if not drip_headers:
                    self.wfile.write(head)
                    self.wfile.flush()
                    head = b""
                try:
                    for byte in head + b" " * 64:
                        # Paced by the clock on purpose: this is the slow server.
                        if outer.stop.wait(pace):
                            return
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                except OSError:
                    pass  # the client gave up, as it should
                finally:
                    with outer.changed:
                        outer.holding -= 1
                        outer.ended += 1
                        outer.changed.notify_all()

            def log_message(self, *args: object) -> None:
                pass

        self.handler = Handler

    def wait_holding(self, count: int) -> None:
        """Wait until ``count`` connections are being held at once."""
        with self.changed:
            assert self.changed.wait_for(lambda: self.holding >= count, timeout=DEADLINE)
