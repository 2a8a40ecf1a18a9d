"""The RTDS hub: websocket subscribers and the activity messages pushed to them (each fill
as ``activity/trades`` and as ``activity/orders_matched``, the type users point to where
``trades`` is disabled: ACCOUNTS.md §12)."""

from __future__ import annotations

import queue
import secrets
import threading
from dataclasses import dataclass, field

from devstack.venue.jsonenc import dumps

ACTIVITY_TYPES = ("trades", "orders_matched")
ACTIVITY_STATES = ("on", "off", "refused")


@dataclass
class Subscriber:
    """One websocket connection and the (topic, type) pairs it asked for."""

    connection_id: str
    outbox: queue.Queue = field(default_factory=queue.Queue)
    topics: set[tuple[str, str]] = field(default_factory=set)

    def wants(self, topic: str, kind: str) -> bool:
        """True when subscribed to topic/kind (a type of "*" means every type)."""
        return (topic, kind) in self.topics or (topic, "*") in self.topics


class RtdsHub:
    """Fan-out of feed messages to every subscribed connection (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: dict[str, Subscriber] = {}
        # The feed's known failure, switchable: connections stay open and answer pings,
        # but no trade reaches them.
        self.muted = False
        # The feed killed: every connection closed and new ones refused (503) until back.
        self.down = False
        # Per activity type (trades, orders_matched): "on", "off" (subscriptions accepted,
        # nothing sent: the type gone for good) or "refused" (a subscription is answered
        # with an error frame and nothing is sent).
        self.activity: dict[str, str] = dict.fromkeys(ACTIVITY_TYPES, "on")

    def connect(self) -> Subscriber:
        """Register a new connection."""
        sub = Subscriber(connection_id=secrets.token_urlsafe(14))
        with self._lock:
            self._subscribers[sub.connection_id] = sub
        return sub

    def disconnect(self, sub: Subscriber) -> None:
        """Forget a connection."""
        with self._lock:
            self._subscribers.pop(sub.connection_id, None)

    def close_all(self) -> None:
        """Tell every sender loop to stop (server shutdown)."""
        with self._lock:
            subs = list(self._subscribers.values())
        for sub in subs:
            sub.outbox.put(None)

    def take_down(self, down: bool) -> None:
        """Kill the feed (close every connection, refuse new ones) or bring it back."""
        self.down = down
        if down:
            self.close_all()

    def refusals(self, pairs: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """The pairs of a subscription whose type is refused, each with the error frame
        answering it (naming the topic and type, and why)."""
        return {(topic, kind): dumps({"topic": topic, "type": kind,
                                      "error": "subscription refused",
                                      "message": f"{topic}/{kind} is not available"})
                for topic, kind in sorted(pairs)
                if topic == "activity" and self.activity.get(kind) == "refused"}

    def count(self) -> int:
        """Number of connected subscribers."""
        return len(self._subscribers)

    def publish(self, topic: str, kind: str, payloads: list[dict], timestamp_ms: int) -> None:
        """Send one frame per payload to subscribers of topic/kind."""
        if (not payloads or not self._subscribers or self.muted
                or (topic == "activity" and self.activity.get(kind, "on") != "on")):
            return
        with self._lock:
            targets = [s for s in self._subscribers.values() if s.wants(topic, kind)]
        for sub in targets:
            for payload in payloads:
                frame = {
                    "connection_id": sub.connection_id,
                    "payload": payload,
                    "timestamp": timestamp_ms,
                    "topic": topic,
                    "type": kind,
                }
                sub.outbox.put(dumps(frame))
