"""A running stack for operations tests: real ``python -m cli worker`` processes and CLI calls."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import redis

from devstack.chain.devchain import die_with_parent
from services.platform import copy_leases, worker_registry
from tests.conftest import DEADLINE, app_settings
from venue.tls import client_context

ROOT = Path(__file__).resolve().parents[2]


def stack_env(app: Any, redis_url: str, prefix: str, venue_server: Any,
              instance: Path) -> dict[str, str]:
    """The environment every process of the test deployment shares."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("POLYMARKET_", "PROMETHEUS_", "METRICS_"))}
    env.update(
        DATABASE_URL=app_settings(app).database_url, REDIS_URL=redis_url, REDIS_PREFIX=prefix,
        COPYTRADE_INSTANCE=str(instance), VENUE="sandbox",
        POLYMARKET_GAMMA_URL=venue_server.gamma_url, POLYMARKET_CLOB_URL=venue_server.clob_url,
        POLYMARKET_DATA_URL=venue_server.data_url, POLYMARKET_RTDS_URL=venue_server.rtds_url,
        SECRET_KEY=app_settings(app).secret_key,
        WALLET_ENCRYPTION_KEY=app_settings(app).wallet_encryption_key,
        WORKER_HEARTBEAT_SECONDS="0.5", WORKER_GRACE_SECONDS="10", COPY_LEASE_MS="2000",
        COPY_HEARTBEAT_SECONDS="0.3", COPY_SWEEP_SECONDS="0.3", COPY_POLL_SECONDS="0.3",
        COPY_BACKSTOP_POLL_SECONDS="1",
        # A screening sweep replays every trader the shared sandbox ranks: the tests of the
        # screened leaderboard run theirs themselves.
        SCREENING_INTERVAL_SECONDS="0",
    )
    return env


class WorkerProcess:
    """One ``python -m cli worker`` child; its output goes to a log file."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.log = logs / f"worker-{time.monotonic_ns()}.log"
        self.output = self.log.open("wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "cli", "worker"], cwd=ROOT,
                                     env=env, stdout=self.output, stderr=subprocess.STDOUT,
                                     preexec_fn=die_with_parent)
        self.client = redis.Redis.from_url(env["REDIS_URL"])
        self.prefix = env["REDIS_PREFIX"]
        self.name = wait(self._registered, DEADLINE, "the worker to register", [self])

    @property
    def pid(self) -> int:
        """The process id."""
        return self.proc.pid

    def _registered(self) -> str | None:
        assert self.proc.poll() is None, self.text()
        for record in worker_registry.list_workers(self.client, self.prefix):
            if record["pid"] == str(self.proc.pid):
                return record["id"]
        return None

    def leases(self) -> list[str]:
        """Targets whose lease this worker holds."""
        base = copy_leases.lease_key("", self.prefix)
        return sorted(k.decode()[len(base):] for k in self.client.scan_iter(match=base + "*")
                      if self.client.get(k) == self.name.encode())

    def text(self) -> str:
        """Everything the worker printed so far."""
        self.output.flush()
        return self.log.read_text(errors="replace")

    def close(self) -> None:
        """Stop it (SIGKILL if still running) and close its log."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.output.close()


def cli(env: dict[str, str], *args: str, ok: bool = True, timeout: float = 120) -> str:
    """Run ``python -m cli ARGS`` in the deployment; its stdout (stderr appended on failure)."""
    done = subprocess.run([sys.executable, "-m", "cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    if ok:
        assert done.returncode == 0, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout if ok else done.stdout + done.stderr


def wait(check: Callable[[], Any], timeout: float = DEADLINE, what: str = "",
         workers: list[WorkerProcess] | tuple[()] = ()) -> Any:
    """Poll ``check`` until truthy; fail with the workers' recent output after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            logs = "\n".join(w.text()[-4000:] for w in workers)
            raise AssertionError(f"timed out waiting for {what or check}\n{logs}")
        time.sleep(0.1)


def wait_serving(web: subprocess.Popen, base: str, log: Path,
                 timeout: float = DEADLINE) -> None:
    """Wait until the web process at ``base`` answers /healthz (fail with its log if it died)."""

    def up() -> bool:
        assert web.poll() is None, log.read_text()
        try:
            answer = httpx.get(f"{base}/healthz", timeout=2, verify=client_context())
            return answer.status_code == 200
        except httpx.HTTPError:
            return False

    wait(up, timeout, "gunicorn to serve")


def stop(proc: subprocess.Popen) -> None:
    """End a server this test started: SIGTERM (a graceful stop), SIGKILL after 30 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
