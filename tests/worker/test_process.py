"""``copytrade worker`` as a real process: signals, grace period, re-queueing, crashes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from devstack.chain.devchain import die_with_parent
from services.platform import jobs as jobs_service
from services.platform import worker_registry
from tests.conftest import DEADLINE
from tests.worker.conftest import TEST_JOB_MODULE, run_host, status, wait_for, wait_status
from tests.worker.jobs_for_tests import marker
from worker.host import WorkerHost

ROOT = Path(__file__).resolve().parents[2]


class WorkerProcess:
    """A ``python -m cli worker`` child with its own prefix and instance folder."""

    def __init__(self, tmp_path: Path, redis_url: str, prefix: str, grace: float) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL",)}
        env.update(
            REDIS_URL=redis_url, REDIS_PREFIX=prefix,
            DATABASE_URL=f"sqlite:///{tmp_path / 'worker.db'}",
            COPYTRADE_INSTANCE=str(tmp_path / "instance"),
            COPYTRADE_JOB_MODULES=TEST_JOB_MODULE,
            WORKER_GRACE_SECONDS=str(grace), WORKER_HEARTBEAT_SECONDS="0.5",
            WORKER_CAPACITY="2",
        )
        self.log = tmp_path / f"worker-{time.monotonic_ns()}.log"
        self.output = self.log.open("wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "cli", "worker"], cwd=ROOT,
                                     env=env, stdout=self.output, stderr=subprocess.STDOUT,
                                     preexec_fn=die_with_parent)
        self.client = redis.Redis.from_url(redis_url)
        self.prefix = prefix
        deadline = time.monotonic() + DEADLINE
        while not self.pid_registered():
            assert self.proc.poll() is None, self.text()
            assert time.monotonic() < deadline, "worker did not register:\n" + self.text()
            time.sleep(0.05)

    def pid_registered(self) -> bool:
        return any(w["pid"] == str(self.proc.pid)
                   for w in worker_registry.list_workers(self.client, self.prefix))

    def text(self) -> str:
        self.output.flush()
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.output.close()


@pytest.fixture
def spawn(tmp_path, redis_url, prefix) -> Iterator:
    started: list[WorkerProcess] = []

    def start(grace: float = 10) -> WorkerProcess:
        worker = WorkerProcess(tmp_path, redis_url, prefix, grace)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def test_sigterm_finishes_jobs_within_grace_and_requeues_the_rest(spawn):
    worker = spawn(grace=2)  # capacity 2
    short = jobs_service.enqueue("test.sleep", "1", queue="high")
    long = jobs_service.enqueue("test.sleep", "30", timeout=60)
    waiting = jobs_service.enqueue("test.add", 1, 2, queue="low")  # no free slot: not claimed
    wait_status(short, "started")
    wait_status(long, "started")
    started = time.monotonic()
    worker.proc.send_signal(signal.SIGTERM)
    assert worker.proc.wait(timeout=10) == 0, worker.text()
    assert 2 <= time.monotonic() - started < 6

    assert status(short) == "finished"  # finished within the grace period
    assert short.return_value(refresh=True) == "slept"

    queue = jobs_service.queue("default")  # still running at the deadline: back in its queue
    assert status(long) == "queued"
    # Back in its queue (beside the notifications tick the worker's scheduler may have queued).
    assert [i for i in queue.job_ids if i in (long.id, short.id)] == [long.id]
    # Neither job is left marked started (a periodic upkeep job, e.g. the notifications
    # tick, may be between its runs in the registry; it is not this test's).
    assert not {long.id, short.id} & set(queue.started_job_registry.get_job_ids(cleanup=False))
    assert long.id not in queue.failed_job_registry.get_job_ids()
    long.refresh()
    assert long.meta["requeued"] == 1
    assert "re-queued at shutdown" in worker.text()

    assert status(waiting) == "queued"  # never taken once the signal came
    assert not worker.pid_registered()


def test_second_signal_cuts_the_grace_period_short(spawn):
    worker = spawn(grace=30)
    job = jobs_service.enqueue("test.sleep", "30", timeout=60)
    wait_status(job, "started")
    worker.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    worker.proc.send_signal(signal.SIGINT)
    assert worker.proc.wait(timeout=10) == 0, worker.text()
    assert status(job) == "queued", worker.text()


def test_jobs_of_a_killed_worker_return_to_the_queue(spawn, settings, redis_conn):
    worker = spawn()
    job = jobs_service.enqueue("test.sleep_once", "crash", timeout=120)
    deadline = time.monotonic() + 10
    while redis_conn.get(marker("runs:crash")) != b"1":  # the first run is under way
        assert time.monotonic() < deadline, worker.text()
        time.sleep(0.02)
    worker.proc.kill()
    worker.proc.wait(timeout=10)
    queue = jobs_service.queue("default")
    # Left started by the dead worker (beside any periodic job it was running, e.g. the
    # notifications tick, which the scheduler queues again anyway).
    assert job.id in queue.started_job_registry.get_job_ids(cleanup=False)

    async def body(host: WorkerHost) -> None:
        # The dead worker's record expires (three missed heartbeats), then the job
        # is re-queued and runs again here.
        await wait_for(lambda: status(job) == "finished")

    run_host(settings, body)
    assert job.return_value(refresh=True) == "run 2"
    assert int(redis_conn.get(marker("runs:crash"))) == 2
    job.refresh()
    assert job.meta["requeued"] == 1
