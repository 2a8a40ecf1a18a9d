"""The enqueue side of background jobs: web requests and services queue work by name and IDs.

A job is a name from the worker's job table (``"withdrawals.send"``) plus the IDs
it works on. Jobs carry IDs, never objects: the worker loads fresh rows itself.
A job may run more than once (a worker can die after doing the work and before
recording it), so every job must do its work once however often it runs.

Queues are RQ queues named ``REDIS_PREFIX + name`` (``copytrade:default``), so
several deployments can share one Redis and operators can inspect jobs with
RQ's own tools (``rq info``). Jobs enqueued with a deterministic ``job_id`` are
queued once: enqueuing again while the first is waiting or running returns it.

Jobs are stored as JSON (``SERIALIZER``), never pickled: whoever can write to the Redis
must not be able to run code in the worker, which holds the wallet encryption key. Every
queue, fetch and worker in the project uses ``SERIALIZER``; a pickled record fails to
decode and nothing runs.
"""

from __future__ import annotations

import re
import uuid

import redis
from rq import Queue
from rq.exceptions import DuplicateJobError, InvalidJobOperation, NoSuchJobError
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer

from services.platform import logs, redis_client
from services.platform.runtime import JobsConfig, runtime

SERIALIZER = JSONSerializer
"""How job records are stored in Redis: JSON (jobs carry only IDs), never pickle."""

WORK_QUEUES: tuple[str, ...] = ("high", "default", "low")
"""The queues of the platform's own work (money, notifications, upkeep), most urgent first;
a worker serves them in this order, in its ``capacity`` slots."""

REPLAY_QUEUE = "replays"
"""Copyability replays (minutes each, asked for by any reader): served only by a worker's
replay slots, after and apart from ``WORK_QUEUES``, so no replay holds up a withdrawal."""

QUEUES: tuple[str, ...] = (*WORK_QUEUES, REPLAY_QUEUE)
"""Every queue name."""

DEFAULT_TIMEOUT = 180
"""Seconds a job may run before the worker gives up on it (RQ's own default)."""

# A job with one of these statuses is still going to run (or is running):
# enqueuing it again must not queue a second copy.
PENDING_STATUSES = frozenset({JobStatus.QUEUED, JobStatus.STARTED, JobStatus.DEFERRED,
                              JobStatus.SCHEDULED})

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def current_config() -> JobsConfig:
    """Where this process's runtime sends jobs."""
    return runtime().jobs


def connection() -> redis.Redis:
    """The shared Redis client for the configured server."""
    return redis_client.connect(current_config().redis_url)


def queue_name(name: str, prefix: str | None = None) -> str:
    """The RQ queue name for one of our queues: ``prefix + name``."""
    if name not in QUEUES:
        raise ValueError(f"unknown queue {name!r}; queues are {', '.join(QUEUES)}")
    return f"{current_config().prefix if prefix is None else prefix}{name}"


def queue(name: str = "default", *, prefix: str | None = None,
          redis_connection: redis.Redis | None = None) -> Queue:
    """The RQ Queue behind one of our queue names."""
    return Queue(queue_name(name, prefix), connection=redis_connection or connection(),
                 default_timeout=DEFAULT_TIMEOUT, serializer=SERIALIZER)


def qualified_job_id(job_id: str, prefix: str | None = None) -> str:
    """The RQ job id for a deterministic ``job_id``: namespaced by the deployment's prefix."""
    if not job_id or _ID_UNSAFE.search(job_id):
        raise ValueError("job_id must be letters, digits, '_' and '-' only")
    namespace = _ID_UNSAFE.sub("-", current_config().prefix if prefix is None else prefix)
    return f"{namespace}{job_id}"


def logical_job_id(job_name: str, *ids: object) -> str:
    """A deterministic job_id for ``job_name`` on ``ids``: ``withdrawals_send-<id>``."""
    parts = [job_name, *(str(i) for i in ids)]
    return "-".join(_ID_UNSAFE.sub("_", part) for part in parts)


def _job_args(ids: tuple[object, ...]) -> tuple[str | int, ...]:
    args: list[str | int] = []
    for value in ids:
        if isinstance(value, uuid.UUID):
            args.append(str(value))
        elif isinstance(value, str | int) and not isinstance(value, bool):
            args.append(value)
        else:
            raise TypeError(f"jobs carry IDs (str, int, UUID), not {type(value).__name__}")
    return tuple(args)


def enqueue(job_name: str, *ids: object, job_id: str | None = None, queue: str = "default",
            timeout: int = DEFAULT_TIMEOUT, at_front: bool = False) -> Job:
    """Queue job ``job_name`` on ``ids``; with ``job_id``, a copy still pending is returned instead.

    A ``job_id`` whose previous run has ended (finished, failed, stopped) is queued
    afresh, replacing that run's record.
    """
    if not job_name:
        raise ValueError("job_name is required")
    if timeout <= 0:
        raise ValueError("timeout must be a positive number of seconds")
    args = _job_args(ids)
    target = _queue(queue)
    # The request (or job) that asked for this work: its id follows the job into the worker.
    origin = logs.request_id.get()
    meta = {"request_id": origin} if origin else None
    if job_id is None:
        return target.enqueue_call(job_name, args=args, timeout=timeout, at_front=at_front,
                                   meta=meta)

    full_id = qualified_job_id(job_id)
    client = target.connection
    for _attempt in range(10):
        existing = _fetch(full_id, client)
        if existing is not None and existing.get_status(refresh=False) in PENDING_STATUSES:
            return existing
        if existing is not None:
            _delete_if_unchanged(existing, client)
        try:
            # RQ's unique enqueue checks and writes in one Lua script: of two racing
            # enqueues, exactly one creates the job.
            return target.enqueue_call(job_name, args=args, timeout=timeout, job_id=full_id,
                                       at_front=at_front, unique=True, meta=meta)
        except DuplicateJobError:
            continue  # someone queued it meanwhile: loop returns theirs (or retries)
    raise RuntimeError(f"job {full_id} keeps changing; not enqueued")


_queue = queue  # ``enqueue`` has a parameter named queue


def _delete_if_unchanged(job: Job, client: redis.Redis) -> None:
    """Delete an ended job's record unless its status changed meanwhile."""
    with client.pipeline() as pipe:
        try:
            pipe.watch(job.key)
            status = pipe.hget(job.key, "status")
            # gone meanwhile (its result expired): nothing to delete, the enqueue goes on
            if status is None or status.decode() in PENDING_STATUSES:
                return
            pipe.multi()
            job.delete(pipeline=pipe)
            pipe.execute()
        except (redis.WatchError, InvalidJobOperation):
            # Changed meanwhile, or gone: RQ's delete reads the status once more, outside
            # the transaction, and fails if the record expired after the read above.
            return


def _fetch(full_id: str, client: redis.Redis) -> Job | None:
    try:
        return Job.fetch(full_id, connection=client, serializer=SERIALIZER)
    except NoSuchJobError:
        return None


def fetch(job_id: str) -> Job | None:
    """The job with RQ id ``job_id`` (as returned by ``enqueue``), or None."""
    return _fetch(job_id, connection())
