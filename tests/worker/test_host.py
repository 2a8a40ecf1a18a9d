"""The worker host in-process: jobs run in threads or on the loop, within capacity and timeouts."""

from __future__ import annotations

import time

import trio
from rq.job import Job

from services.platform import jobs as jobs_service
from services.platform import worker_registry
from tests.conftest import DEADLINE
from tests.forwarder import Forwarder
from tests.worker.conftest import run_host, status, wait_for
from tests.worker.jobs_for_tests import marker
from worker.host import WorkerHost


def finished(job: Job) -> bool:
    return status(job) == "finished"


def failed(job: Job) -> bool:
    return status(job) == "failed"


def test_sync_job_runs_in_a_thread_and_its_result_is_stored(settings):
    job = jobs_service.enqueue("test.add", 2, 3)

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: finished(job))

    run_host(settings, body)
    assert job.return_value(refresh=True) == {"sum": 5, "main_thread": False}
    queue = jobs_service.queue("default")
    assert job.id in queue.finished_job_registry.get_job_ids()
    assert queue.started_job_registry.get_job_ids(cleanup=False) == []
    assert Job.fetch(job.id, connection=queue.connection, serializer=queue.serializer).worker_name


def test_async_job_runs_on_the_loop(settings):
    job = jobs_service.enqueue("test.async_echo", "hi", queue="high")

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: finished(job))

    run_host(settings, body)
    assert job.return_value(refresh=True) == {"echo": "hi", "main_thread": True}


def test_failing_job_lands_in_failed_registry_with_redacted_reason(settings):
    job = jobs_service.enqueue("test.fail", "now")

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: failed(job))

    run_host(settings, body)
    queue = jobs_service.queue("default")
    assert job.id in queue.failed_job_registry.get_job_ids()
    reason = job.latest_result().exc_string
    assert reason.startswith("ValueError: boom now at https://***@rpc.example/v1?api_key=***")
    assert "hunter2" not in reason and "s3cr3t" not in reason
    assert "jobs_for_tests.py" in reason  # the traceback is kept for operators


def test_unknown_job_name_fails_with_a_clear_reason(settings):
    job = jobs_service.enqueue("no.such.job", "x")

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: failed(job))

    run_host(settings, body)
    assert "unknown job 'no.such.job'" in job.latest_result().exc_string


def test_the_worker_serves_others_while_a_thread_job_runs(settings):
    slow = jobs_service.enqueue("test.sleep", str(DEADLINE))  # runs until the worker stops
    quick: list[Job] = []

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: status(slow) == "started")
        quick.append(jobs_service.enqueue("test.add", 1, 1))
        await wait_for(lambda: finished(quick[0]))
        assert status(slow) == "started"  # served during the slow one, not after it

    run_host(settings, body)


def test_replays_run_only_in_their_own_slots_and_the_money_queues_never_wait_for_them(
        settings):
    one_each = type(settings)(**{**settings.__dict__, "capacity": 1, "replay_slots": 1})
    replays = [jobs_service.enqueue("test.sleep", str(DEADLINE), queue=jobs_service.REPLAY_QUEUE)
               for _ in range(3)]  # each runs until the worker stops
    money: list[Job] = []

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: status(replays[0]) == "started")
        for queue in jobs_service.WORK_QUEUES:
            money.append(jobs_service.enqueue("test.add", 1, 1, queue=queue))
        await wait_for(lambda: all(finished(job) for job in money))
        # served beside the replay holding the one replay slot; the others still wait
        assert [status(job) for job in replays] == ["started", "queued", "queued"]

    run_host(one_each, body)


def test_a_worker_without_replay_slots_leaves_the_replays_to_others(settings):
    none = type(settings)(**{**settings.__dict__, "replay_slots": 0})
    replay = jobs_service.enqueue("test.add", 2, 2, queue=jobs_service.REPLAY_QUEUE)
    money = jobs_service.enqueue("test.add", 1, 1)

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: finished(money))
        assert status(replay) == "queued"
        assert jobs_service.queue_name(jobs_service.REPLAY_QUEUE) not in {
            q.name for q in host.queues}

    run_host(none, body)


def test_a_timed_out_thread_job_fails_and_its_thread_stops(settings, redis_conn):
    slow = jobs_service.enqueue("test.sleep", str(DEADLINE), timeout=1)

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: failed(slow))
        # The abandoned thread sees it was cancelled and stops early.
        await wait_for(lambda: redis_conn.exists(marker(f"cancelled:{slow.id}")) == 1)

    started = time.monotonic()
    run_host(settings, body)
    assert time.monotonic() - started < DEADLINE  # ended by its timeout, not by its sleep
    assert slow.latest_result().exc_string.startswith("JobTimeout: timed out after 1s")
    assert slow.id in jobs_service.queue("default").failed_job_registry.get_job_ids()


def test_timed_out_async_job_is_cancelled(settings):
    job = jobs_service.enqueue("test.async_sleep", "30", timeout=1)

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: failed(job))
        await wait_for(lambda: not host.running)  # its slot is free again

    run_host(settings, body)
    assert "timed out after 1s" in job.latest_result().exc_string


def test_jobs_run_concurrently_up_to_capacity(settings, redis_conn):
    capped = type(settings)(**{**settings.__dict__, "capacity": 2})
    jobs = [jobs_service.enqueue("test.concurrent", str(i)) for i in range(5)]

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: all(finished(j) for j in jobs))

    started = time.monotonic()
    run_host(capped, body)
    elapsed = time.monotonic() - started
    assert int(redis_conn.get(marker("max_active"))) == 2
    # Three rounds of 0.4 s, two at a time (max_active shows the two at once); no upper
    # bound: a starved machine may take any time to serve them.
    assert elapsed >= 1.2


def test_queues_are_served_in_priority_order(settings):
    low = jobs_service.enqueue("test.count", "order", queue="low")
    high = jobs_service.enqueue("test.count", "order", queue="high")
    one = type(settings)(**{**settings.__dict__, "capacity": 1})

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: finished(low) and finished(high))

    run_host(one, body)
    assert high.return_value(refresh=True) == 1
    assert low.return_value(refresh=True) == 2


def test_same_job_id_runs_once(settings, redis_conn):
    first = jobs_service.enqueue("test.count", "dedupe", job_id="count-dedupe")
    second = jobs_service.enqueue("test.count", "dedupe", job_id="count-dedupe")
    assert second.id == first.id
    assert jobs_service.queue("default").count == 1

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: finished(first))
        await trio.sleep(0.2)  # time for a duplicate to run, were there one

    run_host(settings, body)
    assert int(redis_conn.get(marker("runs:dedupe"))) == 1


def test_worker_registers_its_identity_and_leaves_at_exit(settings, redis_conn):
    seen: list[list[dict[str, str]]] = []

    async def body(host: WorkerHost) -> None:
        seen.append(await trio.to_thread.run_sync(worker_registry.list_workers, redis_conn,
                                                  settings.prefix))
        ttl = await trio.to_thread.run_sync(redis_conn.ttl, host.identity.key)
        assert 0 < ttl <= settings.worker_ttl

    run_host(settings, body)
    [record] = seen[0]
    assert record["prefix"] == settings.prefix
    assert record["pid"].isdigit() and record["hostname"] and record["started_at"]
    assert record["queues"] == ",".join(f"{settings.prefix}{q}" for q in jobs_service.QUEUES)
    assert worker_registry.list_workers(redis_conn, settings.prefix) == []


def test_control_jobs_start_and_stop_a_long_lived_task(settings, redis_conn):
    ticks = marker("ticks:t1")

    async def body(host: WorkerHost) -> None:
        start = jobs_service.enqueue("test.start_ticker", "t1")
        await wait_for(lambda: finished(start))
        assert start.return_value(refresh=True) is True
        assert "ticker:t1" in host.task_names()
        await wait_for(lambda: int(redis_conn.get(ticks) or 0) >= 3)
        again = jobs_service.enqueue("test.start_ticker", "t1")  # idempotent: no second task
        await wait_for(lambda: finished(again))
        assert again.return_value(refresh=True) is False
        stop = jobs_service.enqueue("test.stop_ticker", "t1")
        await wait_for(lambda: finished(stop))
        assert stop.return_value(refresh=True) is True
        assert "ticker:t1" not in host.task_names()
        assert redis_conn.get(marker("stopped:t1")) == b"1"
        count = int(redis_conn.get(ticks))
        await trio.sleep(0.1)
        assert int(redis_conn.get(ticks)) == count

    run_host(settings, body)


def test_shutdown_stops_long_lived_tasks(settings, redis_conn):
    async def body(host: WorkerHost) -> None:
        start = jobs_service.enqueue("test.start_ticker", "t2")
        await wait_for(lambda: finished(start))

    run_host(settings, body)
    assert redis_conn.get(marker("stopped:t2")) == b"1"


def test_ping_names_the_worker(settings):
    job = jobs_service.enqueue("worker.ping", queue="high")
    names: list[str] = []

    async def body(host: WorkerHost) -> None:
        names.append(host.name)
        await wait_for(lambda: finished(job))

    run_host(settings, body)
    assert job.return_value(refresh=True) == {"worker": names[0]}


def test_undecodable_job_fails_and_the_worker_carries_on(settings, redis_conn):
    broken = jobs_service.enqueue("test.add", 1, 2)
    redis_conn.hset(broken.key, "data", b"not a pickled call")
    unreadable = jobs_service.enqueue("test.add", 1, 2)
    redis_conn.hset(unreadable.key, "created_at", b"yesterday-ish")
    fine = jobs_service.enqueue("test.add", 3, 4)
    registry = jobs_service.queue("default").failed_job_registry

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: failed(broken) and finished(fine))
        await wait_for(lambda: unreadable.id in registry.get_job_ids())

    run_host(settings, body)
    assert redis_conn.hget(unreadable.key, "status") == b"failed"
    assert "DeserializationError" in broken.latest_result().exc_string
    assert fine.return_value(refresh=True)["sum"] == 7


def test_control_job_during_shutdown_goes_back_to_its_queue(settings):
    job = jobs_service.enqueue("test.start_ticker_late", "t3")

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: status(job) == "started")

    run_host(settings, body)  # shuts down: the job's start_task raises WorkerStopping
    assert status(job) == "queued"
    job.refresh()
    assert job.meta["requeued"] == 1
    assert jobs_service.queue("default").job_ids == [job.id]


def test_a_live_workers_job_whose_entry_lapsed_is_not_reaped_by_another(settings, redis_conn):
    # A worker's heartbeat can lapse while the worker still runs the job (a blocked loop, a
    # Redis blip). Another worker's reaper must not hand the job out a second time while
    # its owner is alive: the same withdrawal would run twice at once.
    import dataclasses

    from worker import lifecycle

    slow = jobs_service.enqueue("test.sleep", "3")
    quiet = dataclasses.replace(settings, heartbeat_seconds=30)  # no renewals in the test
    reaped: list[list[str]] = []

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: status(slow) == "started")
        started = host.queues[1].started_job_registry
        [member] = redis_conn.zrange(started.key, 0, -1)
        redis_conn.zadd(started.key, {member: 1})  # the fault: its expiry is long past
        reaped.append(await trio.to_thread.run_sync(
            lifecycle.reap_abandoned, redis_conn, host.queues))
        await wait_for(lambda: finished(slow))

    run_host(quiet, body)
    assert reaped == [[]]
    assert slow.return_value(refresh=True) == "slept"


def test_a_heartbeat_later_than_the_ttl_names_the_worker_again(redis_url):
    """On a starved machine a heartbeat can come after the record expired, and after an
    operator's listing dropped the name: the heartbeat writes the whole record again and
    rejoins the sets, so `copytrade status` and `worker --drain` still find the worker."""
    import secrets

    import redis

    from tests.worker.conftest import delete_prefixed_keys

    client = redis.Redis.from_url(redis_url)
    prefix = f"ct-test-late-beat-{secrets.token_hex(4)}:"
    identity = worker_registry.WorkerIdentity(prefix=prefix, queue_names=["default"])
    try:
        identity.register(client, 30, {"capacity": 4})
        assert [w["id"] for w in worker_registry.list_workers(client, prefix)] == [
            identity.name]
        client.delete(identity.key)  # the TTL ran out before the next beat
        assert worker_registry.list_workers(client, prefix) == []  # (and the name is dropped)
        identity.heartbeat(client, 30, {"state": "busy"})
        [record] = worker_registry.list_workers(client, prefix)
        assert (record["id"], record["pid"], record["state"]) == (
            identity.name, str(identity.pid), "busy")
        assert worker_registry.is_alive(client, identity.name)
    finally:
        identity.unregister(client)
        client.delete(identity.key)
        delete_prefixed_keys(client, prefix)


def test_a_worker_meeting_its_redis_late_waits_for_it_instead_of_dying(settings, redis_url,
                                                                        caplog):
    """Started beside a Redis that does not answer yet (a boot, a starved machine), the
    worker says so and tries again; once Redis answers it registers and serves jobs."""
    from urllib.parse import urlsplit

    import redis

    real = urlsplit(redis_url)
    late = Forwarder("127.0.0.1", real.port or 6379, silent=True)
    client = redis.Redis.from_url(
        real._replace(netloc=f"127.0.0.1:{late.port}").geturl(), socket_timeout=0.3,
        socket_connect_timeout=0.3)
    job = jobs_service.enqueue("test.add", 4, 5)
    seen: list[str] = []

    async def main() -> None:
        host = WorkerHost(settings, client=client)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host.run)
            with trio.fail_after(10):
                while late.accepted < 2:  # the first try timed out, and it tried again
                    await trio.sleep(0.05)
            assert not finished(job)
            late.silent = False
            await wait_for(lambda: finished(job))
            seen.extend(w["id"] for w in worker_registry.list_workers(
                redis.Redis.from_url(redis_url), settings.prefix))
            host.request_shutdown()

    try:
        with caplog.at_level("WARNING", logger="copytrade.worker"):
            trio.run(main)
    finally:
        late.close()
    assert job.return_value(refresh=True)["sum"] == 9
    assert len(seen) == 1
    assert any("Redis out of reach" in r.getMessage() for r in caplog.records)


def test_a_claim_whose_answer_was_lost_goes_back_to_its_queue_at_shutdown(settings, monkeypatch):
    """Redis marked the job started for this worker, but the answer never came back: the
    worker never runs it, and on leaving hands it back rather than strand it until its
    heartbeat expires."""
    import redis

    from worker import lifecycle

    job = jobs_service.enqueue("test.sleep", "30")
    real, lost = lifecycle.claim_next, []

    def claim_next(*args, **kwargs):
        claim = real(*args, **kwargs)
        if claim is not None and not lost:
            lost.append(claim.job_id)
            raise redis.TimeoutError("the answer was lost")  # the fault
        return claim

    monkeypatch.setattr(lifecycle, "claim_next", claim_next)

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: bool(lost))
        assert status(job) == "started" and not host.running

    run_host(settings, body)
    assert status(job) == "queued"
    assert jobs_service.queue("default").job_ids == [job.id]
    job.refresh()
    assert job.meta["requeued"] == 1


def test_a_requeue_that_fails_part_way_leaves_the_job_whole_and_is_tried_again(
        settings, monkeypatch):
    """The shutdown's re-queue is one transaction: a Redis error part-way applies nothing
    (before, the started entry was already gone and the job belonged to no one), and the
    next try puts the job back once."""
    import redis
    from rq import Queue

    job = jobs_service.enqueue("test.sleep", "30")
    real, failures = Queue.enqueue_job, []

    def enqueue_job(self, *args, **kwargs):
        if kwargs.get("at_front") and not failures:
            failures.append(self.name)
            raise redis.ConnectionError("Redis went away")  # the fault, before EXEC
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Queue, "enqueue_job", enqueue_job)

    async def body(host: WorkerHost) -> None:
        await wait_for(lambda: status(job) == "started")

    run_host(settings, body)  # grace 2 s: the job is re-queued at shutdown
    assert failures
    assert status(job) == "queued"
    queue = jobs_service.queue("default")
    assert queue.job_ids == [job.id]
    assert queue.started_job_registry.get_job_ids(cleanup=False) == []
    job.refresh()
    assert job.meta["requeued"] == 1


def test_a_leaving_worker_hands_back_only_the_claims_it_does_not_run(settings, redis_conn):
    """At its exit a worker hands back its own fresh entries, but never one it still runs
    (a job still recording its outcome would run a second time)."""
    from worker import lifecycle

    job = jobs_service.enqueue("test.add", 1, 2)
    queues = [jobs_service.queue(name) for name in jobs_service.QUEUES]
    claim = lifecycle.claim_next(redis_conn, queues, "leaving-worker", 60)
    assert claim is not None and claim.job_id == job.id
    member = claim.execution.composite_key
    kept = lifecycle.reap_abandoned(redis_conn, queues, me="leaving-worker",
                                    mine=frozenset({member}), leaving=True)
    assert kept == [] and status(job) == "started"  # still its own: left
    assert lifecycle.reap_abandoned(redis_conn, queues, me="leaving-worker") == []  # fresh
    assert lifecycle.reap_abandoned(redis_conn, queues, me="leaving-worker",
                                    leaving=True) == [job.id]
    assert status(job) == "queued" and jobs_service.queue("default").job_ids == [job.id]
