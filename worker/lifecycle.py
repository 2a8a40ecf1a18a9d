"""A job's life in Redis, in RQ's data model: claimed, started, then finished, failed or re-queued.

These are RQ's transitions (``rq.worker.BaseWorker.perform_job`` and friends)
without RQ's execution loop, which forks and uses SIGALRM. Every function here
blocks on Redis: the host calls them from threads.

Claiming is one atomic step (a Lua script): the job id leaves its queue and
enters the queue's StartedJobRegistry (``rq:wip:<queue>``) as
``<job_id>:<execution_id>`` together, so there is no moment where a crash
loses it. Heartbeats push the entry's expiry forward; an entry whose execution
names a dead worker (or a lapsed entry of the reaping worker itself that it no
longer runs, or a lapsed one with no execution yet) is abandoned and goes back to
its queue (``reap_abandoned``), not to the failed registry as RQ's
``StartedJobRegistry.cleanup`` would do: our jobs are idempotent, so running
abandoned work again is the safe way to finish it. A live worker's late entry is
left to it: handing it out again would run one job twice at once.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis
from rq import Queue
from rq.defaults import DEFAULT_FAILURE_TTL, DEFAULT_RESULT_TTL
from rq.exceptions import NoSuchJobError
from rq.executions import Execution, ExecutionRegistry
from rq.job import Job, JobStatus
from rq.utils import current_timestamp, now, parse_composite_key, utcformat

from services.platform import jobs as jobs_service
from services.platform import worker_registry

log = logging.getLogger(__name__)

# KEYS: queue1, wip1, queue2, wip2, ... in priority order.
# ARGV[1]: execution id, ARGV[2]: the started-registry score (expiry timestamp).
CLAIM_SCRIPT = """
for i = 1, #KEYS, 2 do
  local job_id = redis.call('LPOP', KEYS[i])
  if job_id then
    redis.call('ZADD', KEYS[i + 1], ARGV[2], job_id .. ':' .. ARGV[1])
    return {KEYS[i], job_id}
  end
end
return false
"""


@dataclass
class Claim:
    """A job this worker took from a queue, with the execution that records the run."""

    job: Job
    queue: Queue
    execution: Execution

    @property
    def job_id(self) -> str:
        """The RQ job id."""
        return self.job.id


def claim_next(client: redis.Redis, queues: Sequence[Queue], worker_name: str,
               ttl: int) -> Claim | None:
    """Take the next job (queues in priority order) and mark it started; None when all are empty."""
    script = client.register_script(CLAIM_SCRIPT)
    by_key = {q.key: q for q in queues}
    keys = [key for q in queues for key in (q.key, q.started_job_registry.key)]
    while True:
        execution_id = uuid.uuid4().hex
        result = script(keys=keys, args=[execution_id, current_timestamp() + ttl])
        if not result:
            return None
        queue = by_key[result[0].decode()]
        job_id = result[1].decode()
        execution = Execution(id=execution_id, job_id=job_id, connection=client,
                              worker_name=worker_name)
        try:
            job = Job.fetch(job_id, connection=client, serializer=jobs_service.SERIALIZER)
        except NoSuchJobError:
            # Deleted (or expired) while queued, as RQ's dequeue_any skips it.
            client.zrem(queue.started_job_registry.key, execution.composite_key)
            continue
        except Exception as exc:
            # A record RQ cannot read: park it in the failed registry rather than
            # let reapers hand it back forever.
            log.error("job %s on %s is unreadable (%s); marked failed", job_id, queue.name, exc)
            with client.pipeline() as pipe:
                pipe.zrem(queue.started_job_registry.key, execution.composite_key)
                pipe.zadd(queue.failed_job_registry.key,
                          {job_id: current_timestamp() + DEFAULT_FAILURE_TTL})
                pipe.hset(Job.key_for(job_id), "status", JobStatus.FAILED.value)
                pipe.execute()
            continue
        with client.pipeline() as pipe:
            execution.save(ttl=ttl, pipeline=pipe)
            ExecutionRegistry(job_id=job_id, connection=pipe).add(execution, ttl=ttl, pipeline=pipe)
            queue.started_job_registry.add_execution(execution, pipeline=pipe, ttl=ttl)
            job.prepare_for_execution(worker_name, pipeline=pipe)
            pipe.execute()
        return Claim(job=job, queue=queue, execution=execution)


def heartbeat(pipe: Any, claim: Claim, ttl: int) -> None:
    """Push the claim's started-registry expiry and execution record ``ttl`` seconds ahead."""
    claim.execution.heartbeat(claim.queue.started_job_registry, ttl, pipeline=pipe)
    pipe.hset(claim.job.key, "last_heartbeat", utcformat(now()))


def _count(pipe: Any, worker_name: str, field: str, claim: Claim) -> None:
    pipe.hincrby(worker_registry.worker_key(worker_name), field, 1)
    if claim.job.started_at and claim.job.ended_at:
        seconds = (claim.job.ended_at - claim.job.started_at).total_seconds()
        pipe.hincrbyfloat(worker_registry.worker_key(worker_name), "total_working_time", seconds)


def record_success(client: redis.Redis, claim: Claim, return_value: Any,
                   worker_name: str) -> None:
    """Store the result, move the job to the FinishedJobRegistry, end the execution."""
    job = claim.job
    job.ended_at = now()
    job._result = return_value
    result_ttl = job.get_result_ttl(DEFAULT_RESULT_TTL)
    with client.pipeline() as pipe:
        if result_ttl != 0:
            job._handle_success(result_ttl, pipeline=pipe, worker_name=worker_name,
                                execution_id=claim.execution.id,
                                execution_started_at=claim.execution.created_at,
                                execution_ended_at=job.ended_at)
        job.cleanup(result_ttl, pipeline=pipe, remove_from_queue=False)
        claim.execution.delete(job=job, pipeline=pipe)
        _count(pipe, worker_name, "successful_job_count", claim)
        pipe.execute()


def record_failure(client: redis.Redis, claim: Claim, reason: str, worker_name: str) -> None:
    """Mark the job failed with ``reason`` in the FailedJobRegistry, end the execution."""
    job = claim.job
    job.ended_at = now()
    with client.pipeline() as pipe:
        job.set_status(JobStatus.FAILED, pipeline=pipe)
        claim.execution.delete(job=job, pipeline=pipe)
        job._handle_failure(reason, pipeline=pipe, worker_name=worker_name,
                            execution_id=claim.execution.id,
                            execution_started_at=claim.execution.created_at,
                            execution_ended_at=job.ended_at)
        _count(pipe, worker_name, "failed_job_count", claim)
        pipe.execute()


def requeue(client: redis.Redis, queue: Queue, job_id: str, execution_id: str) -> bool:
    """Put a started job back at the front of its queue; False if someone else already did.

    One transaction: the started-registry entry leaves and the job enters its queue together,
    so an error or a lost answer part-way leaves the job where it was, and trying again is
    safe (a retry after an applied but unanswered run finds the entry gone: False).
    """
    execution = Execution(id=execution_id, job_id=job_id, connection=client)
    started, member = queue.started_job_registry.key, execution.composite_key
    with client.pipeline() as pipe:
        while True:
            try:
                # Whoever removes the started-registry entry owns the re-queue: a
                # shutting-down worker and a reaper can race here, and exactly one wins.
                pipe.watch(started)
                if pipe.zscore(started, member) is None:
                    return False
                try:
                    job = Job.fetch(job_id, connection=client, serializer=jobs_service.SERIALIZER)
                except NoSuchJobError:
                    pipe.multi()
                    pipe.zrem(started, member)
                    pipe.delete(execution.key)
                    pipe.execute()
                    return False
                pipe.multi()  # Queue.enqueue_job wants a transaction it can join, not open
                execution.delete(job=job, pipeline=pipe)
                job.started_at = None
                job.ended_at = None
                job.meta["requeued"] = int(job.meta.get("requeued", 0)) + 1
                queue.enqueue_job(job, pipeline=pipe, at_front=True)
                pipe.execute()
                break
            except redis.WatchError:
                continue  # the registry moved (another job's heartbeat): look again
    log.warning("job %s (%s) re-queued on %s", job_id, job.func_name, queue.name)
    return True


def reap_abandoned(client: redis.Redis, queues: Sequence[Queue], *, me: str | None = None,
                   mine: frozenset[str] = frozenset(), leaving: bool = False) -> list[str]:
    """Re-queue started jobs whose worker is dead; their ids.

    A lapsed entry of a worker that is still alive is left to it: its heartbeat was late
    (a blocked loop, a Redis blip) but it may well still be running the job, and handing
    the job out again would run it twice at once. The owner itself (``me``, running the
    executions in ``mine``) re-queues its own lapsed entries that it no longer runs (a
    run whose outcome could not be recorded). An entry without an execution record is
    a worker between claim and start: reaped once it lapses. A worker ``leaving`` (its
    jobs ended or re-queued) hands back every entry of its own that it does not run, lapsed
    or not: a claim whose answer it lost is one it will never run.
    """
    requeued = []
    for queue in queues:
        started = queue.started_job_registry
        # Read the raw entries: the registry's own count/get_job_ids would run
        # RQ's cleanup, which sends abandoned jobs to the failed registry.
        for member, score in client.zrange(started.key, 0, -1, withscores=True):
            job_id, execution_id = parse_composite_key(member.decode())
            lapsed = score <= current_timestamp()
            raw_owner = client.hget(Execution(execution_id, job_id, client).key, "worker_name")
            owner = raw_owner.decode() if raw_owner is not None else None
            if owner is None:
                if not lapsed:
                    continue  # a live worker is between claim and start
            elif owner == me:
                if member.decode() in mine or not (lapsed or leaving):
                    continue  # ours and still running: our heartbeat renews it
            elif worker_registry.is_alive(client, owner):
                continue  # a live worker's: never run the same job twice at once
            if requeue(client, queue, job_id, execution_id):
                requeued.append(job_id)
    return requeued
