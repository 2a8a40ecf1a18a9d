"""The copytrade command: migrate and serve, run as real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx

from tests.conftest import free_port


def _env(tmp_path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(COPYTRADE_INSTANCE=str(tmp_path / "instance"), **extra)
    return env


def test_migrate_then_serve(tmp_path, redis_url):
    env = _env(tmp_path, REDIS_URL=redis_url)
    done = subprocess.run([sys.executable, "-m", "cli", "migrate"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "m0001_users" in done.stdout
    again = subprocess.run([sys.executable, "-m", "cli", "migrate"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert "applied 0 migration(s)" in again.stdout

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--port", str(port),
                               "--workers", "1"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.2)
        assert response.status_code == 200
        stats = httpx.get(f"http://127.0.0.1:{port}/api/stats/platform", timeout=5)
        assert stats.json()["total_users"] == 0
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_serve_refuses_unmigrated_database(tmp_path, redis_url):
    env = _env(tmp_path, REDIS_URL=redis_url)
    done = subprocess.run(
        [sys.executable, "-c", "import wsgi"], env=env, capture_output=True, text=True,
        timeout=60)
    assert done.returncode != 0
    assert "copytrade migrate" in done.stderr
