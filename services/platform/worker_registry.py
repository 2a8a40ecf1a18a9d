"""Who is working: each worker process's record in Redis, kept alive by heartbeats.

A worker is registered the way RQ registers its own (hash ``rq:worker:<name>``,
sets ``rq:workers`` and ``rq:workers:<queue>``) so ``rq info`` lists it, and in
``<REDIS_PREFIX>workers`` so ``list_workers`` finds this deployment's workers.
The hash expires unless heartbeats renew it: a worker whose hash is gone (or
carries a ``death`` field) is dead, and its running jobs are up for re-queueing.
"""

from __future__ import annotations

import os
import socket
import sys
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import redis
from rq.utils import now, utcformat
from rq.version import VERSION as RQ_VERSION
from rq.worker import Worker
from rq.worker_registration import REDIS_WORKER_KEYS, WORKERS_BY_QUEUE_KEY

WORKER_KEY_PREFIX = Worker.redis_worker_namespace_prefix  # "rq:worker:"


def workers_set_key(prefix: str) -> str:
    """The set of this deployment's worker names."""
    return f"{prefix}workers"


def drain_key(prefix: str, name: str) -> str:
    """Set (value: who asked) to ask worker ``name`` to drain and exit."""
    return f"{prefix}worker:drain:{name}"


def worker_key(name: str) -> str:
    """The Redis hash of worker ``name``."""
    return f"{WORKER_KEY_PREFIX}{name}"


@dataclass
class WorkerIdentity:
    """One worker process: its unique name, host, pid and start time."""

    prefix: str
    queue_names: list[str]
    name: str = field(default_factory=lambda: (
        f"{socket.gethostname()}.{os.getpid()}.{uuid.uuid4().hex[:8]}"))
    hostname: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)
    started_at: datetime = field(default_factory=now)

    @property
    def key(self) -> str:
        """This worker's Redis hash."""
        return worker_key(self.name)

    def _identity(self) -> dict[str, Any]:
        """The record's fields that never change while the worker lives."""
        return {"birth": utcformat(self.started_at), "queues": ",".join(self.queue_names),
                "pid": self.pid, "hostname": self.hostname, "ip_address": "",
                "version": RQ_VERSION, "python_version": sys.version, "id": self.name,
                "started_at": self.started_at.isoformat(), "prefix": self.prefix}

    def _join(self, pipe: Any) -> None:
        pipe.sadd(REDIS_WORKER_KEYS, self.key)
        for queue_name in self.queue_names:
            pipe.sadd(WORKERS_BY_QUEUE_KEY % queue_name, self.key)
        pipe.sadd(workers_set_key(self.prefix), self.name)

    def register(self, client: redis.Redis, ttl: int, fields: dict[str, Any]) -> None:
        """Write the record (RQ's fields and ours) and join the worker sets."""
        record = {**self._identity(), "last_heartbeat": utcformat(now()), "state": "idle",
                  **fields}
        with client.pipeline() as pipe:
            pipe.delete(self.key)
            pipe.hset(self.key, mapping=record)
            pipe.expire(self.key, ttl)
            self._join(pipe)
            pipe.execute()

    def heartbeat(self, client: redis.Redis | Any, ttl: int, fields: dict[str, Any]) -> None:
        """Renew the record for ``ttl`` seconds with fresh ``fields`` (client may be a pipeline).

        The whole identity is written again, and the sets joined again: a heartbeat late
        beyond the TTL (a starved machine) finds the record gone, and operators' listings
        dropped the name; a record of a few fresh fields alone would name no worker."""
        client.hset(self.key, mapping={**self._identity(), "last_heartbeat": utcformat(now()),
                                       **fields})
        client.expire(self.key, ttl)
        self._join(client)

    def unregister(self, client: redis.Redis) -> None:
        """Mark the record dead (kept 60 s for operators, as RQ does) and leave the sets."""
        with client.pipeline() as pipe:
            pipe.hset(self.key, "death", utcformat(now()))
            pipe.expire(self.key, 60)
            pipe.srem(REDIS_WORKER_KEYS, self.key)
            for queue_name in self.queue_names:
                pipe.srem(WORKERS_BY_QUEUE_KEY % queue_name, self.key)
            pipe.srem(workers_set_key(self.prefix), self.name)
            pipe.execute()


def is_alive(client: redis.Redis, name: str) -> bool:
    """True while worker ``name`` heartbeats and has not registered its death."""
    exists, death = client.pipeline().exists(worker_key(name)).hexists(
        worker_key(name), "death").execute()
    return bool(exists) and not death


def list_workers(client: redis.Redis, prefix: str) -> list[dict[str, str]]:
    """The live workers of the deployment under ``prefix``, as their Redis records."""
    workers = []
    for raw in sorted(client.smembers(workers_set_key(prefix))):
        name = raw.decode()
        record = {k.decode(): v.decode() for k, v in client.hgetall(worker_key(name)).items()}
        if "id" not in record or "death" in record:
            client.srem(workers_set_key(prefix), name)  # expired: it died without a word
            continue
        workers.append(record)
    return workers
