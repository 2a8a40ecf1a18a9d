"""RTDS websocket (/rtds): subscribe to activity/trades and receive every fill as it happens."""

from __future__ import annotations

import contextlib
import json
import threading

from flask import Flask
from flask_sock import Sock
from simple_websocket import ConnectionClosed

from venue.sandbox.feed import Subscriber
from venue.sandbox.state import SandboxState


def install_rtds(app: Flask, state: SandboxState) -> Sock:
    """Mount the RTDS websocket route on the app."""
    sock = Sock(app)

    @sock.route("/rtds")
    def rtds(ws) -> None:
        """One RTDS connection: a reader (subscriptions, pings) and a sender thread."""
        sub = state.feed.connect()
        sender = threading.Thread(target=_send_loop, args=(ws, sub), daemon=True)
        sender.start()
        try:
            while True:
                text = ws.receive()
                if text is None:
                    break
                _handle_client_message(sub, text)
        except ConnectionClosed:
            pass
        finally:
            state.feed.disconnect(sub)
            sub.outbox.put(None)

    return sock


def _send_loop(ws, sub: Subscriber) -> None:
    # Only this thread writes to the socket, so frames never interleave.
    while True:
        frame = sub.outbox.get()
        if frame is None:
            break
        try:
            ws.send(frame)
        except ConnectionClosed:
            break
    with contextlib.suppress(Exception):  # already closed by the peer
        ws.close()


def _handle_client_message(sub: Subscriber, text: str | bytes) -> None:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    stripped = text.strip()
    if stripped.lower() == "ping":
        sub.outbox.put("pong" if stripped == "ping" else "PONG")
        return
    try:
        message = json.loads(stripped)
    except ValueError:
        return
    if not isinstance(message, dict):
        return
    action = message.get("action")
    pairs = set()
    for item in message.get("subscriptions") or []:
        if isinstance(item, dict) and item.get("topic"):
            pairs.add((str(item["topic"]), str(item.get("type") or "*")))
    if action == "subscribe":
        sub.topics |= pairs
    elif action == "unsubscribe":
        sub.topics -= pairs
