"""What an operator sees and steers: workers, queues, failed jobs, copy executors.

``snapshot`` gathers the state of one deployment (a REDIS_PREFIX on one Redis, plus the
database) for ``copytrade status``; the control functions back ``copytrade jobs``,
``copytrade executors`` and ``copytrade worker --drain``. Everything is read from the
shared stores, so the commands work from any machine of the deployment.

Worker records and copy leases are read through ``services.platform.worker_registry`` and
``services.platform.copy_leases`` (Redis key layouts), so one definition of each key serves the
worker and the operator.
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import peewee
import redis
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Job
from rq.registry import FailedJobRegistry
from rq.utils import utcparse

from services.platform import copy_leases, detection_costs, worker_registry
from services.platform import jobs as jobs_service

NEWEST_FAILURES = 5
DRAIN_REQUEST_TTL = 3600  # seconds a drain request waits for its worker
MOVE_HOLD_OFF_MS = 30_000  # how long a moved target stays away from the worker it left

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class OperationRefused(Exception):
    """The operator asked for something that cannot be done now; the message says why."""


def parse_age(text: str) -> timedelta:
    """``7d``, ``12h``, ``30m``, ``45s``, ``2w`` as a timedelta; ValueError otherwise."""
    found = _AGE.match(text or "")
    if not found:
        raise ValueError(f"{text!r} is not an age such as 7d, 12h, 30m or 45s")
    return timedelta(seconds=float(found.group(1)) * _UNITS[found.group(2).lower()])


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _age(then: datetime | None, now: datetime) -> float | None:
    then = _utc(then)
    return None if then is None else round(max(0.0, (now - then).total_seconds()), 3)


def _iso(value: datetime | None) -> str | None:
    value = _utc(value)
    return value.isoformat() if value is not None else None


def _parse_time(raw: str | None) -> datetime | None:
    if not raw:
        return None
    try:
        return _utc(utcparse(raw))
    except ValueError:
        try:
            return _utc(datetime.fromisoformat(raw))
        except ValueError:
            return None


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


# -- reading ------------------------------------------------------------------------------


def lease_holders(client: redis.Redis, prefix: str) -> dict[str, str]:
    """Every leased copy target of the deployment, with the worker (engine) holding it."""
    base = copy_leases.lease_key("", prefix)
    keys = list(client.scan_iter(match=_glob_escape(base) + "*", count=1000))
    if not keys:
        return {}
    values = client.mget(keys)
    return {key.decode()[len(base):]: value.decode()
            for key, value in zip(keys, values, strict=True) if value}


DETECTION_FIELDS = ("detection", "detection_since", "detection_last_gap_at",
                    "detection_last_gap_seconds", "polls_per_minute", "chain_calls_per_minute",
                    "detection_chain", "detection_chain_mode", "detection_chain_since",
                    "detection_pending")
NO_DETECTION: dict[str, Any] = dict.fromkeys(DETECTION_FIELDS)


def engine_detection(client: redis.Redis, prefix: str | None,
                     engines: Iterable[str | None]) -> dict[str, dict[str, Any]]:
    """Each engine's live detection source (feed|matched|chain|poll) and since when, the
    feed's last gap (start, seconds), its Data API polls and chain JSON-RPC calls over the
    last minute and its on-chain detection (live, down, standby or off; websocket or logs;
    since when; pending matches read), from its heartbeat."""
    names = sorted(e for e in engines if e)
    with client.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.hmget(copy_leases.engine_key(name, prefix), *DETECTION_FIELDS)
        answers = pipe.execute()
    found = {}
    for name, values in zip(names, answers, strict=True):
        # An empty field is "none yet" (no gap); an engine from before a field leaves None.
        row = dict(zip(DETECTION_FIELDS, (v.decode() if v else None for v in values),
                       strict=True))
        gap = row["detection_last_gap_seconds"]
        row["detection_last_gap_seconds"] = float(gap) if gap else None
        for count in ("polls_per_minute", "chain_calls_per_minute"):
            row[count] = int(row[count]) if row[count] else None
        row["detection_pending"] = row["detection_pending"] == "true" if row[
            "detection_pending"] else None
        found[name] = row
    return found


def _engine_json(client: redis.Redis, prefix: str, engines: Iterable[str],
                 field: str) -> dict[str, Any]:
    """Per engine, the JSON object its heartbeat keeps under ``field`` (empty ones left
    out)."""
    names = sorted(engines)
    with client.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.hget(copy_leases.engine_key(name, prefix), field)
        answers = pipe.execute()
    found = {}
    for name, raw in zip(names, answers, strict=True):
        try:
            value = json.loads(raw) if raw else {}
        except ValueError:
            value = {}
        if value:
            found[name] = value
    return found


def venue_throttle(client: redis.Redis, prefix: str,
                   engines: Iterable[str]) -> dict[str, dict[str, dict[str, float]]]:
    """Per engine, the signers whose venue budget is backed off after a rate-limit warning
    (``Poly-RateLimit-Warning``): {engine: {signer: {kind: requests per 10 s}}}."""
    return _engine_json(client, prefix, engines, "throttled")


def venue_tiers(client: redis.Redis, prefix: str,
                engines: Iterable[str]) -> dict[str, dict[str, str]]:
    """Per engine, each signer's rate-limit tier as the venue last named it (ACCOUNTS.md
    §12): {engine: {signer: tier}}."""
    return _engine_json(client, prefix, engines, "rate_tiers")


def workers(client: redis.Redis, prefix: str, now: datetime,
            holders: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Live workers: id, host, pid, start, heartbeat age, jobs running, leases held."""
    holders = lease_holders(client, prefix) if holders is None else holders
    found = []
    for record in worker_registry.list_workers(client, prefix):
        name = record.get("id") or record.get("name", "")
        started = _parse_time(record.get("started_at")) or _parse_time(record.get("birth"))
        leases = sorted(t for t, h in holders.items() if h == name)
        found.append({
            "id": name,
            "host": record.get("hostname", ""),
            "pid": int(record["pid"]) if record.get("pid", "").isdigit() else None,
            "started_at": _iso(started),
            "heartbeat_age_seconds": _age(_parse_time(record.get("last_heartbeat")), now),
            "state": record.get("state", ""),
            "running_jobs": int(record.get("running", 0) or 0),
            "capacity": int(record.get("capacity", 0) or 0),
            "draining": record.get("draining") == "1",
            "leases": leases,
        })
    return found


def _failure_reason(job: Job) -> str:
    try:
        result = job.latest_result()
    except Exception:  # an unreadable result must not hide the job
        result = None
    text = (getattr(result, "exc_string", None) or "") if result is not None else ""
    return text.strip().splitlines()[0] if text.strip() else ""


def queues(client: redis.Redis, prefix: str, now: datetime) -> list[dict[str, Any]]:
    """Each queue: depth, age of its oldest waiting job, jobs running, jobs failed."""
    found = []
    for name in jobs_service.QUEUES:
        queue = jobs_service.queue(name, prefix=prefix, redis_connection=client)
        depth = client.llen(queue.key)
        oldest = None
        if depth:
            ends = {v.decode() for v in (client.lindex(queue.key, 0),
                                         client.lindex(queue.key, -1)) if v}
            found_jobs = Job.fetch_many(list(ends), connection=client,
                                        serializer=jobs_service.SERIALIZER)
            times = [_utc(job.enqueued_at) for job in found_jobs
                     if job is not None and job.enqueued_at is not None]
            oldest = min(times) if times else None
        found.append({
            "name": name, "queue": queue.name, "depth": depth,
            "oldest_job_age_seconds": _age(oldest, now),
            # Raw counts: the registries' own count() would run RQ's cleanup.
            "running": client.zcard(queue.started_job_registry.key),
            "failed": client.zcard(queue.failed_job_registry.key),
        })
    return found


def failed_jobs(client: redis.Redis, prefix: str, now: datetime,
                limit: int | None = NEWEST_FAILURES) -> dict[str, Any]:
    """Failed jobs: how many, and the newest ones with their reasons."""
    jobs: list[dict[str, Any]] = []
    count = 0
    for name in jobs_service.QUEUES:
        registry = _failed_registry(client, prefix, name)
        ids = [v.decode() for v in client.zrange(registry.key, 0, -1)]
        count += len(ids)
        for job_id, job in zip(ids, Job.fetch_many(
                ids, connection=client, serializer=jobs_service.SERIALIZER), strict=True):
            ended = _utc(job.ended_at) if job is not None else None
            jobs.append({
                "id": job_id, "queue": name,
                **_call_of(job),
                "failed_at": _iso(ended), "age_seconds": _age(ended, now),
                "reason": _failure_reason(job) if job is not None else "record gone",
                "request_id": (job.meta or {}).get("request_id") if job is not None else None,
            })
    jobs.sort(key=lambda j: j["failed_at"] or "", reverse=True)
    return {"count": count, "newest": jobs if limit is None else jobs[:limit]}


def executors(client: redis.Redis, prefix: str, now: datetime,
              holders: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Active copy configs: owner worker, target, last detection, last error."""
    from models.copying import CopyConfig, CopyIntent, TargetCursor

    holders = lease_holders(client, prefix) if holders is None else holders
    configs = list(CopyConfig.select().where(CopyConfig.is_active,
                                             CopyConfig.deleted_at.is_null())
                   .order_by(CopyConfig.created_at))
    ids = [c.id for c in configs]
    detected: dict[UUID, datetime] = {}
    cursors: dict[str, datetime] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        rows = (CopyIntent.select(CopyIntent.config, peewee.fn.MAX(CopyIntent.seen_at))
                .where(CopyIntent.config.in_(chunk)).group_by(CopyIntent.config).tuples())
        for config_id, seen in rows:
            detected[config_id] = seen
    detection = engine_detection(client, prefix, {holders.get(c.target_address.lower())
                                                  for c in configs} - {None})
    targets = sorted({c.target_address for c in configs})
    for start in range(0, len(targets), 500):
        for cursor in TargetCursor.select().where(
                TargetCursor.target_address.in_(targets[start:start + 500])):
            cursors[cursor.target_address] = cursor.updated_at
    found = []
    for config in configs:
        seen = detected.get(config.id)
        if isinstance(seen, str):  # SQLite aggregates come back as text
            seen = CopyIntent.seen_at.python_value(seen)
        found.append({
            "config_id": str(config.id), "user_id": str(config.user_id),
            "target": config.target_address, "paper": bool(config.paper_trading),
            "owner": holders.get(config.target_address.lower()),
            **detection.get(holders.get(config.target_address.lower()) or "", NO_DETECTION),
            "last_detection_at": _iso(seen),
            "last_detection_age_seconds": _age(seen, now),
            "cursor_saved_at": _iso(cursors.get(config.target_address)),
            "last_error": config.last_error, "last_error_at": _iso(config.last_error_at),
        })
    return found


def snapshot(client: redis.Redis, prefix: str, *, now: datetime | None = None,
             include_executors: bool = True) -> dict[str, Any]:
    """Workers, queues, failed jobs and copy executors of the deployment under ``prefix``."""
    now = now or datetime.now(UTC)
    holders = lease_holders(client, prefix)
    engines = copy_leases.live_engines(client, prefix)
    return {
        "generated_at": now.isoformat(),
        "prefix": prefix,
        "workers": workers(client, prefix, now, holders),
        "queues": queues(client, prefix, now),
        "failed": failed_jobs(client, prefix, now),
        "executors": executors(client, prefix, now, holders) if include_executors else [],
        "engines": engines,
        "detection": engine_detection(client, prefix, engines),
        "detection_sources": detection_costs.table(),
        "venue_throttle": venue_throttle(client, prefix, engines),
        "venue_tiers": venue_tiers(client, prefix, engines),
    }


# -- steering -----------------------------------------------------------------------------


def _call_of(job: Job | None) -> dict[str, Any]:
    """A job's name and args; a record that is not JSON (a planted pickle) is shown as such."""
    if job is None:
        return {"job": "", "args": []}
    try:
        return {"job": job.func_name or "", "args": [str(a) for a in job.args]}
    except Exception:  # never decoded as anything but JSON: that is the point
        return {"job": "(unreadable record)", "args": []}


def _failed_registry(client: redis.Redis, prefix: str, name: str) -> FailedJobRegistry:
    return jobs_service.queue(name, prefix=prefix, redis_connection=client).failed_job_registry


def retry_job(client: redis.Redis, prefix: str, job_id: str) -> dict[str, str]:
    """Put failed job ``job_id`` back on its queue; LookupError when it is not failed."""
    for name in jobs_service.QUEUES:
        registry = _failed_registry(client, prefix, name)
        if client.zscore(registry.key, job_id) is None:
            continue
        try:
            job = registry.requeue(job_id)
        except (InvalidJobOperation, NoSuchJobError):
            break
        return {"id": job.id, "queue": name, "job": _call_of(job)["job"]}
    raise LookupError(f"no failed job {job_id!r} in this deployment's queues")


def retry_all_failed(client: redis.Redis, prefix: str) -> list[dict[str, str]]:
    """Put every failed job back on its queue; what was re-queued."""
    done = []
    for name in jobs_service.QUEUES:
        registry = _failed_registry(client, prefix, name)
        for raw in client.zrange(registry.key, 0, -1):
            try:
                done.append(retry_job(client, prefix, raw.decode()))
            except LookupError:
                continue  # retried or purged meanwhile
    return done


def purge_failed(client: redis.Redis, prefix: str, older_than: timedelta,
                 now: datetime | None = None) -> list[str]:
    """Delete failed jobs that failed more than ``older_than`` ago; their ids."""
    now = now or datetime.now(UTC)
    cutoff = now - older_than
    purged = []
    for name in jobs_service.QUEUES:
        registry = _failed_registry(client, prefix, name)
        ids = [v.decode() for v in client.zrange(registry.key, 0, -1)]
        for job_id, job in zip(ids, Job.fetch_many(
                ids, connection=client, serializer=jobs_service.SERIALIZER), strict=True):
            if job is None:
                client.zrem(registry.key, job_id)  # its record expired already
                purged.append(job_id)
                continue
            ended = _utc(job.ended_at)
            if ended is not None and ended > cutoff:
                continue
            registry.remove(job, delete_job=True)
            purged.append(job_id)
    return purged


def move_executor(client: redis.Redis, prefix: str, config_id: str,
                  hold_off_ms: int = MOVE_HOLD_OFF_MS) -> dict[str, Any]:
    """Release the lease running config ``config_id`` so another worker takes it now.

    Leases are per target wallet (one watcher per target), so every active config of the
    same target moves with it; they are listed in the answer.
    """
    from models.copying import CopyConfig

    try:
        config = CopyConfig.get_or_none(CopyConfig.id == UUID(str(config_id)))
    except ValueError:
        config = None
    if config is None or config.deleted_at is not None:
        raise LookupError(f"no copy config {config_id}")
    if not config.is_active:
        raise OperationRefused(f"config {config_id} is not active: no executor runs it")
    target = config.target_address.lower()
    holder = client.get(copy_leases.lease_key(target, prefix))
    if holder is None:
        raise OperationRefused(f"no worker holds target {target} right now; a worker "
                               "takes it at its next sweep")
    others = [e for e in copy_leases.live_engines(client, prefix) if e != holder.decode()]
    if not others:
        raise OperationRefused(f"{holder.decode()} is the only live worker; start another "
                               "before moving executors")
    load = {e: 0 for e in others}
    for held_by in lease_holders(client, prefix).values():
        if held_by in load:
            load[held_by] += 1
    chosen = min(others, key=lambda e: (load[e], e))  # the least busy other worker
    moved_from = copy_leases.move_target(client, prefix, target, chosen, hold_off_ms)
    if moved_from is None:
        raise OperationRefused(f"the lease on {target} changed hands meanwhile; try again")
    together = [str(c.id) for c in CopyConfig.select(CopyConfig.id).where(
        CopyConfig.target_address == target, CopyConfig.is_active,
        CopyConfig.deleted_at.is_null())]
    return {"config_id": str(config.id), "target": target, "from": moved_from,
            "to": chosen, "configs": together}


def wait_for_owner(client: redis.Redis, prefix: str, target: str, *, not_owner: str | None,
                   timeout: float) -> str | None:
    """Block until someone other than ``not_owner`` holds ``target``; the holder or None."""
    deadline = time.monotonic() + timeout
    key = copy_leases.lease_key(target, prefix)
    while time.monotonic() < deadline:
        raw = client.get(key)
        if raw is not None and raw.decode() != not_owner:
            return raw.decode()
        time.sleep(0.1)
    return None


def resolve_workers(client: redis.Redis, prefix: str, wanted: Iterable[str],
                    *, this_host: bool = False) -> list[str]:
    """Worker ids matching ``wanted`` (full ids, or pids on this host); this host's when empty."""
    live = worker_registry.list_workers(client, prefix)
    here = socket.gethostname()
    wanted = list(wanted)
    if not wanted:
        return [w["id"] for w in live if this_host and w.get("hostname") == here]
    chosen = []
    for item in wanted:
        match = [w["id"] for w in live if w["id"] == item
                 or (item.isdigit() and w.get("pid") == item and w.get("hostname") == here)]
        if not match:
            raise LookupError(f"no live worker {item!r}")
        chosen.extend(match)
    return chosen


def request_drain(client: redis.Redis, prefix: str, names: Iterable[str],
                  requested_by: str = "") -> list[str]:
    """Ask workers to drain: stop claiming, finish (or re-queue) jobs, hand leases back, exit."""
    asked = []
    who = requested_by or f"{socket.gethostname()}.{os.getpid()}"
    for name in names:
        client.set(worker_registry.drain_key(prefix, name), who, ex=DRAIN_REQUEST_TTL)
        asked.append(name)
    return asked


def wait_until_gone(client: redis.Redis, prefix: str, names: Iterable[str],
                    timeout: float) -> list[str]:
    """Wait for workers to unregister; the ones still registered at ``timeout``."""
    remaining = set(names)
    deadline = time.monotonic() + timeout
    while remaining and time.monotonic() < deadline:
        live = {w["id"] for w in worker_registry.list_workers(client, prefix)}
        remaining &= live
        if remaining:
            time.sleep(0.2)
    for name in set(names) - remaining:
        client.delete(worker_registry.drain_key(prefix, name))
    return sorted(remaining)
