"""Local fakes the notification tests send to over real HTTP: a webhook receiver that checks
signatures with the Standard Webhooks reference package, a chat sink (Discord, Slack), and a
fake Telegram Bot API."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


@dataclass
class Received:
    """One request a fake got."""

    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.body)


@dataclass
class Fake:
    """A scripted HTTP server: records every POST; ``status`` is what it answers (set it to
    503 to be down, 410 to be gone)."""

    status: int = 200
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def answer(self, request: Received) -> tuple[int, bytes]:
        """The status and body for one request (subclasses script more)."""
        return self.status, b"{}"

    def bodies(self) -> list[Any]:
        """Every accepted request's JSON body."""
        with self.lock:
            return [r.json() for r in self.received]


@contextmanager
def running(fake: Fake) -> Iterator[Fake]:
    """Serve ``fake`` on a free loopback port for the block."""

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            request = Received(self.path, {k.lower(): v for k, v in self.headers.items()},
                               self.rfile.read(length))
            status, body = fake.answer(request)
            if 200 <= status < 300:
                with fake.lock:
                    fake.received.append(request)
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET = _serve

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class WebhookReceiver(Fake):
    """A webhook endpoint that accepts only messages the reference package verifies."""

    secrets: list[str] = field(default_factory=list)
    rejected: int = 0

    def answer(self, request: Received) -> tuple[int, bytes]:
        if self.status != 200:
            return self.status, b""
        for secret in self.secrets:
            try:
                Webhook(secret).verify(request.body, request.headers)
                return 200, b"{}"
            except WebhookVerificationError:
                continue
        self.rejected += 1
        return 401, b""

    def event_ids(self) -> list[str]:
        """The webhook-id of every accepted message, in arrival order."""
        with self.lock:
            return [r.headers["webhook-id"] for r in self.received]


def _chat(chat_id: int, sender: int | None) -> dict[str, Any]:
    """A chat as Telegram describes it: private (the id is the person's) or a group."""
    if sender is None:
        return {"id": chat_id, "type": "private"}
    return {"id": chat_id, "type": "supergroup", "title": "a group"}


@dataclass
class FakeTelegram(Fake):
    """A fake Telegram Bot API for one token: records sendMessage and answerCallbackQuery,
    hands out queued updates on getUpdates, accepts setWebhook."""

    token: str = "123456:test-token"
    updates: list[dict[str, Any]] = field(default_factory=list)
    next_id: int = 1

    def answer(self, request: Received) -> tuple[int, bytes]:
        prefix = f"/bot{self.token}/"
        if not request.path.startswith(prefix):
            return 404, json.dumps({"ok": False, "error_code": 404,
                                    "description": "Not Found"}).encode()
        method = request.path[len(prefix):]
        if method == "getUpdates":
            asked = request.json() or {}
            offset = asked.get("offset") or 0
            with self.lock:
                ready = [u for u in self.updates if u["update_id"] >= offset]
            if not ready:  # a long poll: wait a little, as Telegram would
                time.sleep(min(float(asked.get("timeout") or 0), 0.5))
            return 200, json.dumps({"ok": True, "result": ready}).encode()
        return 200, json.dumps({"ok": True, "result": {"message_id": 1}}).encode()

    def say(self, chat_id: int, text: str, sender: int | None = None) -> None:
        """Queue a message in ``chat_id``: a private chat with that person, or (``sender``
        given) a group chat where ``sender`` wrote it."""
        with self.lock:
            self.updates.append({"update_id": self.next_id, "message": {
                "message_id": self.next_id, "chat": _chat(chat_id, sender),
                "from": {"id": chat_id if sender is None else sender, "is_bot": False},
                "text": text}})
            self.next_id += 1

    def press(self, chat_id: int, data: str, sender: int | None = None) -> None:
        """Queue an inline-button press in ``chat_id`` (by ``sender`` in a group chat)."""
        with self.lock:
            self.updates.append({"update_id": self.next_id, "callback_query": {
                "id": str(self.next_id), "data": data,
                "from": {"id": chat_id if sender is None else sender, "is_bot": False},
                "message": {"message_id": 1, "chat": _chat(chat_id, sender)}}})
            self.next_id += 1

    def sent(self, method: str = "sendMessage") -> list[dict[str, Any]]:
        """The bodies of every call of ``method``."""
        with self.lock:
            return [r.json() for r in self.received if r.path.endswith("/" + method)]
