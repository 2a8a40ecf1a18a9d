"""Metrics across processes: ``copytrade serve`` (gunicorn, two web processes) and a worker
process share the multiprocess folder; one scrape of the web shows both. SIGTERM on the web
lets an in-flight request finish.

PostgreSQL only: these test the metrics folder and the processes' signals, not the
database; each test starts gunicorn or a worker whose SQLite run only repeated the same
processes (a deployment of several processes runs PostgreSQL).
"""

from __future__ import annotations

import secrets
import signal
import subprocess
import sys
import threading
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from devstack.chain.devchain import die_with_parent
from services.platform import jobs as jobs_service
from services.platform import runtime
from tests.conftest import DEADLINE, free_port, use_queue
from tests.operations.scrape import total
from tests.operations.stack import ROOT, WorkerProcess, stack_env, wait, wait_serving

pytestmark = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)


def test_web_and_worker_processes_share_one_metrics_exposition(
        app, tmp_path, redis_url, engine_prefix, venue_server, api_key):
    instance = tmp_path / "instance"
    folder = instance / "prometheus"
    folder.mkdir(parents=True)
    (folder / "counter_999999.db").write_bytes(b"stale")  # an earlier run's leftovers
    token = secrets.token_urlsafe(16)
    env = {**stack_env(app, redis_url, engine_prefix, venue_server, instance),
           "METRICS_TOKEN": token}
    port = free_port()
    log = (tmp_path / "web.log").open("wb")
    web = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--port", str(port),
                            "--workers", "2"], cwd=ROOT, env=env, stdout=log,
                           stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
    worker = None
    saved = runtime.runtime()
    try:
        base = f"http://127.0.0.1:{port}"
        wait_serving(web, base, tmp_path / "web.log")
        assert not (folder / "counter_999999.db").exists()  # cleaned at start

        # The worker writes into the same folder (as under `copytrade up`).
        worker = WorkerProcess({**env, "PROMETHEUS_MULTIPROC_DIR": str(folder)}, tmp_path)
        use_queue(redis_url, engine_prefix)
        ping = jobs_service.enqueue("worker.ping")
        wait(lambda: ping.get_status(refresh=True).value == "finished", DEADLINE, "the ping job",
             [worker])
        for _ in range(6):  # spread over both gunicorn processes
            httpx.get(f"{base}/healthz", headers={"X-Request-Id": "mp-probe"},
                      timeout=DEADLINE)

        assert httpx.get(f"{base}/metrics", timeout=DEADLINE).status_code == 401

        def scrape() -> str | None:
            """The exposition once it counts the ping and the probes (the worker marks a
            job finished, then counts it: a scrape may come between the two)."""
            scraped = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {token}"},
                                timeout=DEADLINE)
            assert scraped.status_code == 200
            counted = (total(scraped.text, "copytrade_job_duration_seconds_count",
                             job="worker.ping", outcome="succeeded") >= 1
                       and total(scraped.text, "copytrade_http_requests_total",
                                 route="/healthz") >= 6)
            return scraped.text if counted else None

        text = wait(scrape, DEADLINE, "the ping and the probes in one scrape", [worker])
        assert total(text, "copytrade_job_duration_seconds_count", job="worker.ping",
                     outcome="succeeded") == 1
        assert len(list(folder.glob("*.db"))) >= 2  # web processes and the worker

        # SIGTERM: a request in flight is answered before the web exits. The venue holds
        # its next Data API answer for a few seconds (under the client's 10 s timeout); the
        # signal is sent once the request has reached the venue (the fault is spent), so
        # it surely lands while the request runs, however slowly the machine got there.
        httpx.post(f"{venue_server.url}/_sandbox/faults", json={
            "path": "/data", "delay": "5", "status": 0, "count": 1}).raise_for_status()
        key = api_key("read:markets")
        answers: list[int | str] = []

        def ask() -> None:
            try:
                answers.append(httpx.get(
                    f"{base}/api/helpers/suggest-multiplier",
                    params={"target_address": "0x" + "ab" * 20, "balance": "1000"},
                    headers={"Authorization": f"Bearer {key}"}, timeout=DEADLINE).status_code)
            except httpx.HTTPError as exc:
                answers.append(repr(exc))

        slow = threading.Thread(target=ask)
        slow.start()
        wait(lambda: httpx.get(f"{venue_server.url}/_sandbox/state").json()["faults"] == [],
             DEADLINE, "the request to reach the venue")
        web.send_signal(signal.SIGTERM)
        slow.join(DEADLINE)
        assert web.wait(timeout=DEADLINE) == 0
        assert answers == [200]
    finally:
        runtime.install(saved)
        if worker is not None:
            worker.close()
        if web.poll() is None:
            web.kill()
            web.wait(timeout=10)
        log.close()


def test_a_worker_serves_its_own_metrics_port(app, tmp_path, redis_url, engine_prefix,
                                               venue_server):
    port = free_port()
    env = {**stack_env(app, redis_url, engine_prefix, venue_server, tmp_path / "instance"),
           "WORKER_METRICS_PORT": str(port)}
    worker = WorkerProcess(env, tmp_path)
    saved = runtime.runtime()
    try:
        use_queue(redis_url, engine_prefix)
        failing = jobs_service.enqueue("no.such.job")
        wait(lambda: failing.get_status(refresh=True).value == "failed", DEADLINE, "the job",
             [worker])

        def failures() -> Decimal:
            text = httpx.get(f"http://127.0.0.1:{port}/metrics").text
            return total(text, "copytrade_job_failures_total", job="no.such.job")

        # The worker records the job's failure, then counts it: the status can show first.
        wait(lambda: failures() > 0, DEADLINE, "the failure's count", [worker])
        assert failures() == 1
        assert Path(worker.log).exists()
    finally:
        runtime.install(saved)
        worker.close()
