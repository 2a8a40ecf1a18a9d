"""The enqueue side: named jobs with IDs on prefixed RQ queues, queued once per job_id."""

from __future__ import annotations

import secrets
import threading
import uuid
from collections.abc import Iterator

import pytest
import redis
from rq.job import Job, JobStatus

from services.platform import jobs as jobs_service
from services.platform import runtime
from tests.conftest import RUN_ID, use_queue
from tests.worker.conftest import delete_prefixed_keys


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    value = f"ct-test-{RUN_ID}-s{secrets.token_hex(3)}:"
    previous = use_queue(redis_url, value)
    yield value
    runtime.install(previous)
    delete_prefixed_keys(redis.Redis.from_url(redis_url), value)


def test_enqueue_puts_a_named_job_with_ids_on_a_prefixed_queue(prefix):
    withdrawal = uuid.uuid4()
    job = jobs_service.enqueue("withdrawals.send", withdrawal, 7, queue="high", timeout=30)
    assert job.origin == f"{prefix}high"
    assert job.func_name == "withdrawals.send"
    assert job.args == (str(withdrawal), 7)
    assert job.timeout == 30
    assert jobs_service.queue("high").job_ids == [job.id]
    assert job.key == f"rq:job:{job.id}"  # RQ's own keys: rq info sees it
    assert jobs_service.fetch(job.id).func_name == "withdrawals.send"


@pytest.mark.parametrize("bad", [{"id": 1}, 1.5, True, None, b"raw"])
def test_jobs_carry_ids_not_objects(prefix, bad):
    with pytest.raises(TypeError, match="jobs carry IDs"):
        jobs_service.enqueue("claims.run", bad)


def test_unknown_queue_and_bad_job_ids_are_refused(prefix):
    with pytest.raises(ValueError, match="unknown queue"):
        jobs_service.enqueue("claims.run", "1", queue="urgent")
    with pytest.raises(ValueError, match="job_id"):
        jobs_service.enqueue("claims.run", "1", job_id="claims:run:1")
    with pytest.raises(ValueError, match="timeout"):
        jobs_service.enqueue("claims.run", "1", timeout=0)


def test_logical_job_id_is_deterministic_and_valid(prefix):
    withdrawal = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert jobs_service.logical_job_id("withdrawals.send", withdrawal) == (
        "withdrawals_send-12345678-1234-5678-1234-567812345678")
    job = jobs_service.enqueue("withdrawals.send", withdrawal,
                               job_id=jobs_service.logical_job_id("withdrawals.send", withdrawal))
    # Namespaced by the prefix, so deployments sharing a Redis never collide.
    assert job.id == jobs_service.qualified_job_id(
        "withdrawals_send-12345678-1234-5678-1234-567812345678")
    assert job.id.startswith(prefix.replace(":", "-"))


def test_same_job_id_is_queued_once_while_pending(prefix):
    first = jobs_service.enqueue("claims.run", "u1", job_id="claims-u1")
    again = jobs_service.enqueue("claims.run", "u1", job_id="claims-u1")
    assert again.id == first.id
    assert jobs_service.queue("default").count == 1


def test_same_job_id_racing_enqueues_queue_one_job(prefix):
    barrier = threading.Barrier(8)
    ids: list[str] = []

    def enqueue() -> None:
        barrier.wait()
        ids.append(jobs_service.enqueue("claims.run", "u2", job_id="claims-u2").id)

    threads = [threading.Thread(target=enqueue) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(ids)) == 1
    assert jobs_service.queue("default").count == 1


@pytest.mark.parametrize("ended", [JobStatus.FINISHED, JobStatus.FAILED])
def test_a_job_id_whose_run_ended_is_queued_again(prefix, ended):
    first = jobs_service.enqueue("claims.run", "u3", job_id="claims-u3")
    queue = jobs_service.queue("default")
    queue.remove(first)
    first.set_status(ended)  # as the worker leaves it
    again = jobs_service.enqueue("claims.run", "u3", job_id="claims-u3")
    assert again.id == first.id
    assert Job.fetch(again.id, connection=queue.connection,
                     serializer=queue.serializer).get_status() == JobStatus.QUEUED
    assert queue.job_ids == [again.id]


def test_a_job_whose_record_expires_while_it_is_queued_again_is_queued(prefix):
    # Maintenance re-queues a row's job just as the ended run's record expires (its result
    # TTL): the record fetched a moment ago is gone when it is to be replaced.
    first = jobs_service.enqueue("claims.run", "u4", job_id="claims-u4")
    queue = jobs_service.queue("default")
    queue.remove(first)
    first.set_status(JobStatus.FINISHED)
    queue.connection.delete(first.key)  # expired between the fetch and the delete
    jobs_service._delete_if_unchanged(first, queue.connection)
    again = jobs_service.enqueue("claims.run", "u4", job_id="claims-u4")
    assert queue.job_ids == [again.id]


def test_a_record_that_expires_while_it_is_deleted_does_not_fail_the_enqueue(prefix,
                                                                              monkeypatch):
    # The soak found it: the ended run's record expired after the watched status read, and
    # RQ's delete reads the status again (outside the transaction) to pick its registries.
    first = jobs_service.enqueue("claims.run", "u5", job_id="claims-u5")
    queue = jobs_service.queue("default")
    queue.remove(first)
    first.set_status(JobStatus.FINISHED)
    delete = Job.delete

    def expiring_first(job: Job, *args, **kwargs):  # the fault: the TTL ends right now
        queue.connection.delete(job.key)
        return delete(job, *args, **kwargs)

    monkeypatch.setattr(Job, "delete", expiring_first)
    again = jobs_service.enqueue("claims.run", "u5", job_id="claims-u5")
    assert again.id == first.id
    assert queue.job_ids == [again.id]
