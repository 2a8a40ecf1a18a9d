"""Floors of a keyed GET's stages: the same work as each request hook, in minimal code.

- limiter: one EVALSHA of a small GCRA script on the local Redis, written and read on a
  plain socket (one round trip; redis-py's client costs several times this);
- access: the key's HMAC-SHA256, one SELECT of the key joined to its user (sqlite3);
- operations: a request id, one JSON log line written to a file, a request counter and a
  latency histogram (prometheus_client, multiprocess files as the product runs them);
- view: the user's profile read by primary key and encoded as JSON.

Gunicorn's and Flask's own share is the bare app's, which ``bench/api_throughput.py``
measures beside the product in every round.

    .venv/bin/python bench/floors/api_floors.py
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import socket
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from floor_clock import cpu_ms

GCRA = """
local tat = tonumber(redis.call('GET', KEYS[1]) or ARGV[1])
local now = tonumber(ARGV[1])
local new = math.max(tat, now) + tonumber(ARGV[2])
redis.call('SET', KEYS[1], new, 'PX', 60000)
return {1, new}
"""


def _command(*words: str) -> bytes:
    parts = [f"*{len(words)}\r\n".encode()]
    for word in words:
        data = word.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


def limiter() -> Callable[[], Any]:
    """One bucket taken: one script call, RESP on a kept-alive socket."""
    import redis

    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    client = redis.Redis.from_url(url)
    sha = client.script_load(GCRA)
    where = client.connection_pool.connection_kwargs
    connection = socket.create_connection((where["host"], where["port"]))
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    key = f"floors:{uuid.uuid4().hex}"

    def take() -> bytes:
        connection.sendall(_command("EVALSHA", sha, "1", key, repr(time.time()), "0.001"))
        return connection.recv(4096)
    return take


def access() -> Callable[[], Any]:
    """One key checked: its HMAC, one joined SELECT."""
    db = sqlite3.connect(os.path.join(tempfile.mkdtemp(prefix="floors-"), "keys.db"),
                         check_same_thread=False)
    db.execute("CREATE TABLE users (id TEXT PRIMARY KEY, email TEXT, status TEXT)")
    db.execute("CREATE TABLE keys (hash TEXT PRIMARY KEY, user TEXT, scopes TEXT)")
    secret = b"server-secret"
    token = "ctk_" + uuid.uuid4().hex
    digest = hmac.new(secret, token.encode(), hashlib.sha256).hexdigest()
    db.execute("INSERT INTO users VALUES ('u1', 'a@example.com', 'active')")
    db.execute("INSERT INTO keys VALUES (?, 'u1', 'read')", (digest,))
    db.commit()
    query = ("SELECT k.scopes, u.id, u.status FROM keys k JOIN users u ON u.id = k.user "
             "WHERE k.hash = ?")

    def check() -> Any:
        found = hmac.new(secret, token.encode(), hashlib.sha256).hexdigest()
        return db.execute(query, (found,)).fetchone()
    return check


def operations() -> Callable[[], Any]:
    """A request id, the JSON log line, the counter and the histogram."""
    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="floors-prom-"))
    from prometheus_client import Counter, Histogram

    requests = Counter("floor_requests_total", "r", ["method", "route", "status"])
    latency = Histogram("floor_request_seconds", "l", ["method", "route"])
    counted = requests.labels("GET", "/api/users/me", "200")
    timed = latency.labels("GET", "/api/users/me")
    log = open(os.path.join(tempfile.mkdtemp(prefix="floors-log-"), "log"), "a")  # noqa: SIM115

    def finish() -> None:
        started = time.perf_counter()
        request_id = uuid.uuid4().hex
        log.write(json.dumps({"ts": time.time(), "level": "INFO", "msg": "request",
                              "request_id": request_id, "method": "GET",
                              "path": "/api/users/me", "status": 200, "ms": 0.4,
                              "user": "u1"}) + "\n")
        counted.inc()
        timed.observe(time.perf_counter() - started)
    return finish


def view() -> Callable[[], Any]:
    """The profile read and encoded."""
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.execute("CREATE TABLE users (id TEXT PRIMARY KEY, email TEXT, name TEXT, wallet TEXT)")
    db.execute("INSERT INTO users VALUES ('u1', 'a@example.com', 'A', '0x' || hex(randomblob(20)))")

    def read() -> bytes:
        row = db.execute("SELECT id, email, name, wallet FROM users WHERE id = ?",
                         ("u1",)).fetchone()
        return json.dumps(dict(zip(("id", "email", "name", "wallet"), row, strict=True))
                          ).encode()
    return read


def measure() -> dict[str, float]:
    """Each API stage's floor, µs of CPU per request."""
    return {name: cpu_ms(make(), calls=1000) * 1000
            for name, make in (("limiter", limiter), ("access", access),
                               ("operations", operations), ("view", view))}


if __name__ == "__main__":
    for name, us in measure().items():
        print(f"{name}: {us:.1f} µs per request")
