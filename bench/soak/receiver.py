"""The followers' webhook endpoints: one local HTTP server, a path per follower, that keeps
every delivery it was given (its ``webhook-id``, the event's type) and answers 200."""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    """Counts the deliveries each path received, by ``webhook-id``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.received: dict[str, Counter[str]] = {}
        self.types: dict[str, str] = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                message_id = self.headers.get("webhook-id") or ""
                try:
                    kind = str(json.loads(body or b"{}").get("type", ""))
                except ValueError:
                    kind = ""
                with receiver.lock:
                    receiver.received.setdefault(self.path, Counter())[message_id] += 1
                    receiver.types[message_id] = kind
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        """The endpoint of follower ``name``."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook/{name}"

    def counts(self, name: str) -> Counter[str]:
        """How many times each ``webhook-id`` reached follower ``name``'s endpoint."""
        with self.lock:
            return Counter(self.received.get(f"/hook/{name}", Counter()))

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()
