"""MCP ``subscriptions/listen`` under the real web server (``copytrade serve``: gunicorn gthread,
2 processes x 4 threads): two agents' streams stay open in whichever processes took them, a
notification emitted by another process (as a worker would) reaches its owner's stream, the
other threads keep answering meanwhile, and a stream beyond MCP_LISTEN_STREAMS is refused."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
import threading
import time
from typing import Any

import httpx

from devstack.chain.devchain import die_with_parent
from tests.conftest import DEADLINE, free_port
from tests.fresh_interpreter import run_python
from tests.operations.stack import ROOT, cli, wait_serving
from tests.operations.stack import stop as stop_server

SETUP = """
import json
import config
from models import database
from models.user import User
from schemas.vocabulary import ALL_SCOPES
from services.identity import keys
from services.platform import runtime, wiring
from services.platform.principal import Principal

loaded = config.load()
runtime.install(wiring.build_runtime(loaded))
with database.bind(loaded.flat()["DATABASE_URL"]).connection_context():
    made = []
    for n in range(2):
        user = User.create(email=f"listener-{n}@example.com")
        owner = Principal(user=user, kind="session", scopes=ALL_SCOPES)
        made.append({"user": str(user.id),
                     "key": keys.create(owner, "agent", ["read:account"], 1).secret})
    print(json.dumps(made))
"""

EMIT = """
import sys
import config
from models import database
from services.notifications import events
from services.platform import runtime, wiring

loaded = config.load()
runtime.install(wiring.build_runtime(loaded))
with database.bind(loaded.flat()["DATABASE_URL"]).connection_context():
    row = events.emit(sys.argv[1], "claim.available", "claim.available:" + sys.argv[1] + ":c",
                      amount="3", market="Gunicorn?")
    print(row.id)
"""

LISTEN = {"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen", "params": {
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {}},
    "notifications": {"resourceSubscriptions": ["copytrade://notifications"]}}}


def _headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}


def _serve(tmp_path: Any, redis_url: str, **settings: str
           ) -> tuple[subprocess.Popen[bytes], str, list[dict[str, str]], dict[str, str]]:
    """`copytrade serve` (2 processes x 4 threads) on a free port, two users' keys, and the
    environment it runs with."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("POLYMARKET_", "PROMETHEUS_", "METRICS_", "OAUTH_"))}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'web.db'}", REDIS_URL=redis_url,
               REDIS_PREFIX=f"ct-listen-{secrets.token_hex(4)}:",
               COPYTRADE_INSTANCE=str(tmp_path / "instance"), SECRET_KEY=secrets.token_hex(32),
               WALLET_ENCRYPTION_KEY=secrets.token_hex(32), BASE_URL=base, WEB_CONCURRENCY="2",
               RATE_LIMIT_ENABLED="false", **settings)
    cli(env, "migrate")
    made = json.loads(run_python(SETUP, env=env))
    log = (tmp_path / "web.log").open("wb")
    web = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--port", str(port),
                            "--threads", "4"], cwd=ROOT, env=env, stdout=log,
                           stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
    return web, base, made, env


def test_listen_streams_under_gunicorn(tmp_path: Any, redis_url: str) -> None:
    web, base, made, env = _serve(tmp_path, redis_url, MCP_LISTEN_STREAMS="1")
    heard: dict[int, list[Any]] = {0: [], 1: []}
    acked = [threading.Event(), threading.Event()]
    refused: list[int] = []
    clients = [httpx.Client(base_url=base, timeout=httpx.Timeout(DEADLINE)) for _ in range(2)]

    def listen(n: int) -> None:
        with contextlib.suppress(httpx.HTTPError):  # the test closed the client at the end
            follow(n)

    def follow(n: int) -> None:
        # One stream per process is allowed: a refused one tries again, so the two
        # streams end up one in each process.
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            with clients[n].stream("POST", "/api/mcp", json=LISTEN,
                                   headers=_headers(made[n]["key"])) as response:
                if response.status_code == 429:
                    refused.append(n)
                    time.sleep(0.2)
                    continue
                for line in response.iter_lines():
                    if not line.startswith("data: "):
                        continue
                    frame = json.loads(line[6:])
                    if frame.get("method") == "notifications/subscriptions/acknowledged":
                        acked[n].set()
                    elif frame.get("method") == "notifications/resources/updated":
                        heard[n].append(frame)
                        return
            return

    try:
        wait_serving(web, base, tmp_path / "web.log")
        threads = [threading.Thread(target=listen, args=(n,), daemon=True) for n in (0, 1)]
        for thread in threads:
            thread.start()
        assert all(event.wait(DEADLINE) for event in acked), "both streams acknowledged"
        # Both processes hold a stream now: the other threads still answer, while both
        # streams stay open. (Were every thread held, it would wait until a stream ends:
        # never, until the notification below; it would time out instead.)
        assert httpx.get(f"{base}/healthz", timeout=DEADLINE).status_code == 200
        assert all(thread.is_alive() for thread in threads) and not any(heard.values())
        # A third stream finds both processes full.
        extra = httpx.post(f"{base}/api/mcp", json=LISTEN, headers=_headers(made[0]["key"]),
                           timeout=DEADLINE)
        assert extra.status_code == 429 and extra.json()["error"]["code"] == -31429
        # Another process (a worker, say) emits for the second user: their stream hears it.
        emitted = run_python(EMIT, made[1]["user"], env=env).strip()
        threads[1].join(DEADLINE)
        assert [f["params"]["uri"] for f in heard[1]] == [
            f"copytrade://notifications/{emitted}"]
        assert heard[0] == []  # not the other user's
    finally:
        for client in clients:
            client.close()
        stop_server(web)


def test_a_stopping_server_ends_open_streams_gracefully(tmp_path: Any, redis_url: str) -> None:
    """SIGTERM with a listen stream open: the stream gets its graceful end (the result
    ``complete``) and the server exits on its own, well before its grace period would have
    it kill the process holding the stream ("Worker was sent SIGKILL! Perhaps out of
    memory?")."""
    grace = DEADLINE / 2  # the stream's thread would hold its process this long
    web, base, made, _env = _serve(tmp_path, redis_url, WEB_GRACE_SECONDS=f"{grace:g}",
                             MCP_LISTEN_MAX_SECONDS=f"{DEADLINE * 10:g}")
    frames: list[dict[str, Any]] = []
    acked = threading.Event()

    def listen() -> None:
        with httpx.Client(base_url=base, timeout=httpx.Timeout(DEADLINE)) as client, \
                client.stream("POST", "/api/mcp", json=LISTEN,
                              headers=_headers(made[0]["key"])) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    frames.append(json.loads(line[6:]))
                    acked.set()

    try:
        wait_serving(web, base, tmp_path / "web.log")
        thread = threading.Thread(target=listen, daemon=True)
        thread.start()
        assert acked.wait(DEADLINE), "the stream was acknowledged"
        web.terminate()
        thread.join(grace)  # the stream ends before the grace period would end it
        assert not thread.is_alive()
        assert frames[-1]["result"]["resultType"] == "complete", frames
        assert web.wait(timeout=grace) == 0
    finally:
        stop_server(web)
    log = (tmp_path / "web.log").read_text()
    assert "ERROR" not in log and "SIGKILL" not in log and "Traceback" not in log, log
