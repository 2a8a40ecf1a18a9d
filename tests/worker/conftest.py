"""Worker test fixtures: a private key prefix per test, a bound database, a host runner.

Every test gets its own REDIS_PREFIX, hence its own queues, registries and
deterministic job ids; its keys are deleted afterwards (never FLUSHDB: other
runs share the server).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import peewee
import pytest
import redis
import trio
from rq.job import Job

from models import database as database_module
from services.platform import jobs as jobs_service
from services.platform import runtime
from tests.conftest import DEADLINE, RUN_ID, use_queue
from worker import jobs as job_table
from worker.host import WorkerHost, WorkerSettings

TEST_JOB_MODULE = "tests.worker.jobs_for_tests"
job_table.load_modules(TEST_JOB_MODULE)  # what the worker process does at start


def _job_ids(client: redis.Redis, prefix: str) -> set[str]:
    ids: set[str] = set()
    for name in jobs_service.QUEUES:
        queue = f"{prefix}{name}"
        ids.update(v.decode() for v in client.lrange(f"rq:queue:{queue}", 0, -1))
        for registry in ("wip", "finished", "failed"):
            for member in client.zrange(f"rq:{registry}:{queue}", 0, -1):
                ids.add(member.decode().split(":")[0])
    return ids


def delete_prefixed_keys(client: redis.Redis, prefix: str) -> None:
    """Delete every key a test under ``prefix`` created, jobs and results included."""
    keys: set[bytes | str] = set()
    for job_id in _job_ids(client, prefix):
        keys.update(f"rq:{kind}:{job_id}" for kind in ("job", "results", "executions"))
    slug = jobs_service.qualified_job_id("x", prefix)[:-1]
    for pattern in (f"*{prefix}*", f"*{slug}*"):
        keys.update(client.scan_iter(match=pattern, count=1000))
    if keys:
        client.delete(*keys)


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    """A REDIS_PREFIX of this test's own; enqueues go there."""
    value = f"ct-test-{RUN_ID}-w{secrets.token_hex(3)}:"
    previous = use_queue(redis_url, value)
    yield value
    runtime.install(previous)
    delete_prefixed_keys(redis.Redis.from_url(redis_url), value)


@pytest.fixture
def redis_conn(redis_url: str) -> redis.Redis:
    """A Redis client for assertions."""
    return redis.Redis.from_url(redis_url)


@pytest.fixture
def scratch_db(tmp_path) -> Iterator[peewee.Database]:
    """A throwaway SQLite database bound to the models (jobs run in a DB connection)."""
    bound = database_module.bind(f"sqlite:///{tmp_path / 'worker.db'}")
    yield bound
    bound.close()


@pytest.fixture
def settings(redis_url: str, prefix: str, scratch_db: peewee.Database) -> WorkerSettings:
    """Fast worker settings: short heartbeats, polls and grace."""
    return WorkerSettings(redis_url=redis_url, prefix=prefix, capacity=4, grace_seconds=2,
                          heartbeat_seconds=0.5, poll_seconds=0.05)


def run_host(settings: WorkerSettings, body: Callable[[WorkerHost], Awaitable[Any]]) -> None:
    """Run a worker in-process while ``body(host)`` runs, then shut it down cleanly."""

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            host = await nursery.start(WorkerHost(settings).run)
            try:
                await body(host)
            finally:
                host.request_shutdown()

    trio.run(main)


async def wait_for(predicate: Callable[[], bool], timeout: float = DEADLINE) -> None:
    """Poll ``predicate`` (in a thread: it may call Redis) until true; fail after ``timeout``."""
    with trio.fail_after(timeout):
        while not await trio.to_thread.run_sync(predicate):
            await trio.sleep(0.02)


def status(job: Job) -> str:
    """The job's current status, read from Redis."""
    found = job.get_status(refresh=True)
    return found.value if found is not None else "gone"


def wait_status(job: Job, wanted: str, timeout: float = DEADLINE) -> None:
    """Block (outside Trio) until ``job`` reaches ``wanted``."""
    deadline = time.monotonic() + timeout
    while status(job) != wanted:
        assert time.monotonic() < deadline, f"job {job.id} is {status(job)}, not {wanted}"
        time.sleep(0.02)
