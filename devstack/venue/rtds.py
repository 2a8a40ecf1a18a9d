"""RTDS websocket (/rtds): subscribe to activity/trades (or activity/orders_matched) and
receive every fill as it happens; a refused type is answered with an error frame."""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from collections.abc import Callable

from flask import Flask, Response, request
from flask_sock import Sock
from simple_websocket import ConnectionClosed

from devstack.venue.feed import Subscriber
from devstack.venue.state import SandboxState


def install_rtds(app: Flask, state: SandboxState) -> Sock:
    """Mount the RTDS websocket route on the app."""
    sock = Sock(app)

    @app.before_request
    def _refuse_while_down() -> Response | None:
        # Before the websocket handshake, so a killed feed never looks connected.
        if state.feed.down and request.path == "/rtds":
            return Response("RTDS is down", status=503)
        return None

    @sock.route("/rtds")
    def rtds(ws) -> None:
        """One RTDS connection: a reader (subscriptions, pings) and a sender thread."""
        sub = state.feed.connect()
        try:
            serve_connection(ws, sub.outbox,
                             lambda text: _handle_client_message(state, sub, text))
        finally:
            state.feed.disconnect(sub)
            sub.outbox.put(None)

    return sock


def serve_connection(ws, outbox: queue.Queue, handle: Callable[[str], None]) -> None:
    """Read client text into `handle` until the peer goes; a sender thread drains `outbox`.

    The caller puts None in `outbox` afterwards (or at shutdown) to end the sender.
    """
    sender = threading.Thread(target=_send_loop, args=(ws, outbox), daemon=True)
    sender.start()
    try:
        while True:
            text = ws.receive()
            if text is None:
                break
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            handle(text)
    except ConnectionClosed:
        pass


def client_message(outbox: queue.Queue, text: str) -> dict | None:
    """A client's JSON object message; a text ping is answered here ("ping" -> "pong",
    "PING" -> "PONG") and, like anything else that is not an object, gives None."""
    stripped = text.strip()
    if stripped.lower() == "ping":
        outbox.put("pong" if stripped == "ping" else "PONG")
        return None
    try:
        message = json.loads(stripped)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _send_loop(ws, outbox: queue.Queue) -> None:
    # Only this thread writes to the socket, so frames never interleave.
    while True:
        frame = outbox.get()
        if frame is None:
            break
        try:
            ws.send(frame)
        except (ConnectionClosed, OSError):  # OSError: the peer went before the close frame
            break
    with contextlib.suppress(Exception):  # already closed by the peer
        ws.close()


def _handle_client_message(state: SandboxState, sub: Subscriber, text: str) -> None:
    message = client_message(sub.outbox, text)
    if message is None:
        return
    action = message.get("action")
    pairs = set()
    for item in message.get("subscriptions") or []:
        if isinstance(item, dict) and item.get("topic"):
            pairs.add((str(item["topic"]), str(item.get("type") or "*")))
    if action == "subscribe":
        refused = state.feed.refusals(pairs)
        for topic_type, frame in refused.items():  # a refused type is not subscribed
            pairs.discard(topic_type)
            sub.outbox.put(frame)
        sub.topics |= pairs
    elif action == "unsubscribe":
        sub.topics -= pairs
