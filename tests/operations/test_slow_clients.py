"""Issue 18 "done when": the real web server (``copytrade serve``: gunicorn gthread, 2 processes
x 4 threads, SQLite, the test Redis) still answers ``/healthz`` and an authenticated GET
while 50 signed-in clients keep ``/oauth/authorize`` busy with client_id URLs whose server
drips one byte at a time: answered without waiting for any of those fetches to give its
thread back (none ends while the probes run), which holds at any machine speed. Loopback
only; bounded; it stops by itself."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import threading
import time
from urllib.parse import urlencode

import httpx
from flask import Flask

from devstack.chain.devchain import die_with_parent
from tests.api.oauth_flow import authorize_params, pkce
from tests.conftest import DEADLINE, free_port
from tests.fresh_interpreter import run_python
from tests.local_http import Dripper, serving
from tests.operations.stack import ROOT, cli, wait_serving
from tests.operations.stack import stop as stop_server
from venue.tls import client_context

SLOW_CLIENTS = 50
PROBES = 5
FETCH_SECONDS = 600  # a client document fetch's deadline here (OAUTH_FETCH_DEADLINE_SECONDS)

# Run in the server's environment: a user, a read:account API key and a session JWT.
SETUP = """
import json
import config
from models import database
from models.user import User
from schemas.vocabulary import ALL_SCOPES
from services.identity import auth, keys
from services.platform import runtime, wiring
from services.platform.principal import Principal

loaded = config.load()
runtime.install(wiring.build_runtime(loaded))  # the tier table the key quota reads
settings = loaded.flat()
with database.bind(settings["DATABASE_URL"]).connection_context():
    user = User.create(email="slow-clients@example.com")
    owner = Principal(user=user, kind="session", scopes=ALL_SCOPES)
    key = keys.create(owner, "probe", ["read:account"], 1).secret
    print(json.dumps({"key": key, "jwt": auth.issue_session(user).token}))
"""


def _session_cookie(secret_key: str, jwt: str) -> str:
    """The dashboard's signed session cookie for ``jwt`` (what signing in sets)."""
    signer = Flask("cookie")
    signer.secret_key = secret_key
    return signer.session_interface.get_signing_serializer(signer).dumps(
        {"session_jwt": jwt, "csrf_token": secrets.token_urlsafe(16)})


def test_healthz_and_an_authenticated_get_answer_while_50_clients_hold_authorize(
        tmp_path, redis_url):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    secret_key = secrets.token_hex(32)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("POLYMARKET_", "PROMETHEUS_", "METRICS_", "OAUTH_"))}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'web.db'}", REDIS_URL=redis_url,
               REDIS_PREFIX=f"ct-slow-{secrets.token_hex(4)}:",
               COPYTRADE_INSTANCE=str(tmp_path / "instance"), SECRET_KEY=secret_key,
               WALLET_ENCRYPTION_KEY=secrets.token_hex(32), BASE_URL=base,
               OAUTH_ALLOW_HTTP_CLIENT_ID_URLS="1", WEB_CONCURRENCY="2",
               # The fetches hold their threads until the test ends them (not the 3 s
               # default): a probe that needed one of those threads would wait, not pass.
               OAUTH_FETCH_DEADLINE_SECONDS=str(FETCH_SECONDS),
               # One loopback address for every client here: the rate limit is not the
               # subject (its per-client buckets are tested in tests/api/test_ratelimit.py).
               RATE_LIMIT_PER_SECOND="100000", RATE_LIMIT_BURST="100000")
    cli(env, "migrate")
    made = json.loads(run_python(SETUP, env=env))
    cookie = _session_cookie(secret_key, made["jwt"])
    log = (tmp_path / "web.log").open("wb")
    web = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--port", str(port),
                            "--threads", "4"], cwd=ROOT, env=env, stdout=log,
                           stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
    dripper = Dripper(drip_headers=False, pace=FETCH_SECONDS / 32)  # longer than the fetch
    stop = threading.Event()
    answered: list[int] = []

    def slow_client(number: int, drip_base: str) -> None:
        # Answered when the test ends the drips, or when the fetch gives up.
        with httpx.Client(base_url=base, cookies={"session": cookie},
                          timeout=FETCH_SECONDS + DEADLINE, verify=client_context()) as http:
            attempt = 0
            while not stop.is_set():
                attempt += 1
                client_id = f"{drip_base}/client/{number}-{attempt}.json"
                params = authorize_params(client_id, pkce()[1])
                try:
                    answered.append(http.get("/oauth/authorize?" + urlencode(params))
                                    .status_code)
                except httpx.HTTPError:
                    answered.append(0)
                # Each client asks again a second after its answer: slow clients holding
                # the endpoint, not a flood (floods are the rate limiter's).
                stop.wait(1.0)

    try:
        wait_serving(web, base, tmp_path / "web.log")
        with serving(dripper.handler) as drip_base:
            clients = [threading.Thread(target=slow_client, args=(n, drip_base), daemon=True)
                       for n in range(SLOW_CLIENTS)]
            for thread in clients:
                thread.start()
            dripper.wait_holding(2)  # fetches of client documents are being dripped to
            ended = dripper.ended
            timings = []
            with httpx.Client(base_url=base, timeout=DEADLINE) as probe:
                for _ in range(PROBES):
                    for path, headers in (("/healthz", {}), (
                            "/api/users/me", {"Authorization": f"Bearer {made['key']}"})):
                        started = time.monotonic()
                        response = probe.get(path, headers=headers)
                        timings.append((path, response.status_code,
                                        round(time.monotonic() - started, 3)))
            held, ended = dripper.holding, dripper.ended - ended
            stop.set()
            dripper.stop.set()
            joined_by = time.monotonic() + DEADLINE
            for thread in clients:
                thread.join(max(0.0, joined_by - time.monotonic()))
        assert all(status == 200 for _, status, _ in timings), timings
        # The slow fetches were held all along: no probe was answered by a thread one of
        # them gave back (the time each probe took is the machine's, shown on failure).
        assert held >= 1 and ended == 0, (held, ended, timings)
        # The slow clients got answers (the consent page is never reached: their documents
        # never arrive), not dropped connections.
        assert not any(thread.is_alive() for thread in clients)
        assert answered and set(answered) <= {400}, sorted(set(answered))
    finally:
        stop.set()
        dripper.stop.set()
        stop_server(web)
        log.close()
