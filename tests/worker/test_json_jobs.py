"""Jobs are JSON in Redis (issue 18, finding 9): a pickled record planted there never runs code."""

from __future__ import annotations

import json
import pathlib
import zlib

from rq import Queue

from services.platform import jobs as jobs_service
from tests.worker.conftest import run_host, status, wait_for
from worker.host import WorkerHost


class _Touch:
    """Unpickling this calls ``Path.touch``: the planted code an attacker would run."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path

    def __reduce__(self):
        return (pathlib.Path.touch, (self.path,))


def test_an_enqueued_job_is_stored_as_json(settings, redis_conn):
    job = jobs_service.enqueue("test.add", 2, 3, job_id="json-check")
    raw = redis_conn.hget(job.key, "data")
    assert json.loads(zlib.decompress(raw)) == ["test.add", None, [2, 3], {}]
    assert jobs_service.fetch(job.id).args == [2, 3]


def test_a_pickled_job_planted_in_redis_is_not_executed(settings, redis_conn, tmp_path):
    planted = tmp_path / "pwned"
    # someone who can write to Redis queues a job with RQ's default (pickle) serializer
    queue = Queue(jobs_service.queue_name("default"), connection=redis_conn)
    job = queue.enqueue_call("test.add", args=(_Touch(planted), 1))
    add = jobs_service.enqueue("test.add", 1, 1)

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: status(add) == "finished")
        await wait_for(lambda: status(job) == "failed")

    run_host(settings, body)
    assert not planted.exists()


def test_operations_show_a_planted_pickled_job_without_running_it(settings, redis_conn,
                                                                   tmp_path):
    from datetime import UTC, datetime

    from services.platform import operations

    planted = tmp_path / "pwned"
    queue = Queue(jobs_service.queue_name("default"), connection=redis_conn)
    job = queue.enqueue_call("test.add", args=(_Touch(planted), 1))

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: status(job) == "failed")

    run_host(settings, body)
    shown = operations.failed_jobs(redis_conn, settings.prefix, datetime.now(UTC))
    assert [j["job"] for j in shown["newest"]] == ["(unreadable record)"]
    assert not planted.exists()
