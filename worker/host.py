"""``copytrade worker``: one Trio process that runs RQ jobs and hosts long-lived tasks.

Jobs come from RQ queues (``<REDIS_PREFIX>high``, ``default``, ``low``, served in
that order, in ``capacity`` slots; ``replays``, the copyability replays, only in
``replay_slots`` of their own, so a replay never holds a slot a withdrawal or a
notification waits for) and keep RQ's data model (started, finished and failed registries,
results), so RQ's tools can inspect them. The loop is ours: RQ's Worker forks
and times jobs out with SIGALRM, which cannot work for threads in one process.

- A plain ``def`` job runs in a worker thread, an ``async def`` job on the loop;
  at most ``capacity`` jobs run at once.
- At ``job.timeout`` an async job is cancelled; a thread cannot be killed, so it
  is abandoned (its ``current_job()`` reports cancelled) and the job is failed
  with "timed out after Ns". Either way the slot is free for the next job.
- SIGTERM/SIGINT: stop claiming, let running jobs finish within the grace period,
  then put the rest back at the front of their queues and exit 0. A second
  signal ends the grace period at once.
- Jobs of workers that died (no heartbeat, or registered death) go back to their
  queue, at start and on every heartbeat. A live worker's late entry is left to it
  (the same job never runs twice at once); each worker re-queues its own lapsed
  entries that it no longer runs.
- Control jobs start and stop long-lived tasks (copy executors) in the host's
  nursery with ``start_task`` / ``stop_task``.
- ``copytrade worker --drain`` asks a worker (on any machine) to do what SIGTERM does:
  it sets ``worker_registry.drain_key``, which the worker checks twice a second.
"""

from __future__ import annotations

import dataclasses
import faulthandler
import logging
import math
import signal
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import redis
import trio

from config import Settings
from services.platform import jobs as jobs_service
from services.platform import logs, metrics, redis_client, wiring, worker_registry
from services.platform import runtime as process_runtime
from worker import jobs as job_table
from worker import lifecycle, reasons

log = logging.getLogger("copytrade.worker")

MIN_POLL_SECONDS = 0.02
DRAIN_POLL_SECONDS = 0.5
# A worker meeting its Redis late tries again after 0.5 s, doubling up to 5 s between tries.
REGISTER_RETRY_FIRST = 0.5
REGISTER_RETRY_MAX = 5.0
SHUTDOWN_TRIES = 3  # a Redis blip at shutdown must not strand a job until a reaper comes
SHUTDOWN_RETRY_SECONDS = 0.5


@dataclass(frozen=True)
class WorkerSettings:
    """How one worker process runs."""

    redis_url: str
    prefix: str = "copytrade:"
    queues: tuple[str, ...] = jobs_service.QUEUES
    capacity: int = 8
    replay_slots: int = 1  # replays at once, beside ``capacity`` (0: none on this worker)
    grace_seconds: float = 25.0
    heartbeat_seconds: float = 10.0
    poll_seconds: float = 0.5  # longest pause between claims while idle
    startup_tasks: bool = False  # start jobs.startup_tasks() (the copy engine); main() does

    @property
    def worker_ttl(self) -> int:
        """Seconds a heartbeat keeps this worker (and its jobs) alive: three missed beats."""
        return max(2, math.ceil(3 * self.heartbeat_seconds))

    @classmethod
    def from_settings(cls, settings: Settings, redis_url: str) -> WorkerSettings:
        """Worker settings from the process's Settings."""
        return cls(redis_url=redis_url, prefix=settings.redis_prefix,
                   capacity=settings.worker.capacity,
                   replay_slots=settings.worker.replay_slots,
                   grace_seconds=settings.worker.grace_seconds,
                   heartbeat_seconds=settings.worker.heartbeat_seconds)


@dataclass(frozen=True)
class _Success:
    value: Any


@dataclass(frozen=True)
class _Failure:
    reason: str


@dataclass(frozen=True)
class _Requeue:
    why: str


@dataclass
class RunningJob:
    """A claimed job while this worker runs it."""

    claim: lifecycle.Claim
    context: job_table.JobContext
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    started: float = field(default_factory=time.monotonic)
    settling: bool = False  # its outcome is being recorded: shutdown must leave it be
    requeued: bool = False  # shutdown put it back on its queue: its outcome is void
    thread_done: bool = False
    abandoned: bool = False
    recorded: bool = False  # its outcome is in Redis: no more heartbeats
    lock: threading.Lock = field(default_factory=threading.Lock)  # heartbeat vs record
    lane: _Lane | None = None  # the slots it holds (released when it ends)


class _Lane:
    """Queues claimed into slots of their own: the work queues in ``capacity`` slots, the
    replays in ``replay_slots``; each with its own threads for sync jobs."""

    def __init__(self, name: str, queues: list[Any], slots: int) -> None:
        self.name = name
        self.queues = queues
        self.slots = trio.Semaphore(slots)
        # Sync jobs' threads, running or abandoned after a timeout, apart from the
        # threads the host itself uses for Redis: abandoned threads can never
        # starve claims and heartbeats. Beyond ``slots`` abandoned threads, new
        # sync jobs wait for a thread (within their own timeout).
        self.threads = trio.CapacityLimiter(2 * slots)
        self.wait_scope: trio.CancelScope | None = None


@dataclass
class LongTask:
    """A long-lived task in the host's nursery (a copy executor, say)."""

    name: str
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    done: trio.Event = field(default_factory=trio.Event)


class WorkerStopping(RuntimeError):
    """The worker is shutting down and takes no new tasks; the job goes back to its queue."""


class WorkerHost:
    """Claims jobs, runs them within capacity and timeouts, and hosts long-lived tasks."""

    def __init__(self, settings: WorkerSettings, client: redis.Redis | None = None) -> None:
        self.settings = settings
        self.client = client or redis_client.connect(settings.redis_url)
        served = [name for name in settings.queues
                  if name != jobs_service.REPLAY_QUEUE or settings.replay_slots > 0]
        self.queues = [jobs_service.queue(name, prefix=settings.prefix,
                                          redis_connection=self.client)
                       for name in served]
        self.identity = worker_registry.WorkerIdentity(prefix=settings.prefix,
                                                       queue_names=[q.name for q in self.queues])
        self.running: dict[str, RunningJob] = {}
        self.tasks: dict[str, LongTask] = {}
        self.abandoned_threads = 0
        by_name = dict(zip(served, self.queues, strict=True))
        self._lanes = [_Lane("work", [by_name[n] for n in served
                                      if n != jobs_service.REPLAY_QUEUE], settings.capacity)]
        if jobs_service.REPLAY_QUEUE in by_name:
            self._lanes.append(_Lane("replays", [by_name[jobs_service.REPLAY_QUEUE]],
                                     settings.replay_slots))
        self._taking_work = True
        self._shutdown_requested = False
        self._deadline = math.inf
        self._drain_scope: trio.CancelScope | None = None
        self._job_nursery: trio.Nursery | None = None
        self._task_nursery: trio.Nursery | None = None
        self._accepting_tasks = False
        self._thread_lock = threading.Lock()

    @property
    def name(self) -> str:
        """This worker's unique name (host.pid.random)."""
        return self.identity.name

    # -- the run -----------------------------------------------------------------

    async def run(self, *, install_signal_handlers: bool = False,
                  task_status: trio.TaskStatus[WorkerHost] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve jobs until stopped (``request_shutdown``, or SIGTERM/SIGINT when installed)."""
        await self._register()
        try:
            await self._reap()
            log.info("worker %s serving %s (capacity %d, replay slots %d)", self.name,
                     ", ".join(q.name for q in self.queues), self.settings.capacity,
                     self.settings.replay_slots if len(self._lanes) > 1 else 0)
            async with trio.open_nursery() as root:
                root.start_soon(self._heartbeat_loop)
                root.start_soon(self._drain_request_loop)
                if install_signal_handlers:
                    await root.start(self._signal_loop)
                async with trio.open_nursery() as tasks:
                    self._task_nursery = tasks
                    self._accepting_tasks = True
                    if self.settings.startup_tasks:
                        for task_name, task_fn in job_table.startup_tasks().items():
                            await self.start_task(task_name, task_fn, self)
                    async with trio.open_nursery() as jobs:
                        self._job_nursery = jobs
                        task_status.started(self)
                        async with trio.open_nursery() as lanes:
                            for lane in self._lanes:
                                lanes.start_soon(self._claim_loop, lane)
                        self._accepting_tasks = False
                        self._cancel_all_tasks()
                        await self._drain()
                root.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True):
                try:
                    await trio.to_thread.run_sync(self.identity.unregister, self.client)
                except redis.RedisError as exc:
                    log.warning("worker %s could not unregister: %s", self.name, exc)
            log.info("worker %s stopped", self.name)

    async def _register(self) -> None:
        """Register this worker, waiting out a Redis that is slow or not up yet."""
        # A worker started beside its Redis (a boot, `copytrade up`, a starved machine)
        # may meet it late: it waits and says so rather than dying on the first timeout.
        delay = REGISTER_RETRY_FIRST
        while True:
            try:
                await trio.to_thread.run_sync(self.identity.register, self.client,
                                              self.settings.worker_ttl, self._status_fields())
                return
            except redis.RedisError as exc:
                log.warning("worker %s: Redis out of reach (%s); trying again in %gs",
                            self.name, exc, delay)
            await trio.sleep(delay)
            delay = min(delay * 2, REGISTER_RETRY_MAX)

    def stop_taking_work(self) -> None:
        """Claim no more jobs; running jobs and the grace period carry on (the drain path)."""
        self._taking_work = False
        for lane in self._lanes:
            if lane.wait_scope is not None:
                lane.wait_scope.cancel()

    def request_shutdown(self) -> None:
        """Stop claiming and give running jobs the grace period before re-queueing them."""
        if not self._shutdown_requested:
            self._shutdown_requested = True
            self._deadline = trio.current_time() + self.settings.grace_seconds
            if self._drain_scope is not None:
                self._drain_scope.deadline = self._deadline
            log.info("worker %s shutting down: %d job(s) running, %gs grace", self.name,
                     len(self.running), self.settings.grace_seconds)
        self.stop_taking_work()

    def hurry(self) -> None:
        """End the grace period now: running jobs are re-queued."""
        self._deadline = trio.current_time()
        if self._drain_scope is not None:
            self._drain_scope.deadline = self._deadline
        self.stop_taking_work()

    async def _drain_request_loop(self) -> None:
        """Drain when an operator asks (``copytrade worker --drain``), like SIGTERM."""
        key = worker_registry.drain_key(self.settings.prefix, self.name)
        while True:
            await trio.sleep(DRAIN_POLL_SECONDS)
            try:
                asked = await trio.to_thread.run_sync(self.client.get, key)
            except redis.RedisError:
                continue
            if asked:
                log.info("worker %s: drain requested by %s", self.name, asked.decode())
                self.request_shutdown()
                return

    async def _signal_loop(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                           ) -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            task_status.started()
            async for signum in signals:
                if self._shutdown_requested:
                    log.info("worker %s: second %s, re-queueing running jobs now", self.name,
                             signal.Signals(signum).name)
                    self.hurry()
                else:
                    self.request_shutdown()

    # -- claiming ----------------------------------------------------------------

    async def _claim_loop(self, lane: _Lane) -> None:
        delay = MIN_POLL_SECONDS
        while self._taking_work:
            acquired = False
            with trio.CancelScope() as lane.wait_scope:
                await lane.slots.acquire()
                acquired = True
            if not self._taking_work:
                if acquired:
                    lane.slots.release()
                break
            try:
                with trio.CancelScope(shield=True):  # a claimed job must not be dropped
                    claim = await trio.to_thread.run_sync(
                        lifecycle.claim_next, self.client, lane.queues, self.name,
                        self.settings.worker_ttl)
            except Exception as exc:  # Redis down, a corrupt job record: keep serving
                log.error("worker %s cannot claim jobs: %s", self.name, exc)
                claim = None
                delay = self.settings.poll_seconds
            if claim is None:
                lane.slots.release()
                if not self._taking_work:
                    break
                with trio.CancelScope() as lane.wait_scope:
                    await trio.sleep(delay)
                delay = min(delay * 2, self.settings.poll_seconds)
                continue
            delay = MIN_POLL_SECONDS
            self._start_job(claim, lane)

    def _start_job(self, claim: lifecycle.Claim, lane: _Lane) -> None:
        timeout = claim.job.timeout
        seconds = float(timeout) if timeout and timeout > 0 else math.inf
        context = job_table.JobContext(job_id=claim.job_id, name="", ids=(),
                                       timeout=seconds, host=self)
        running = RunningJob(claim=claim, context=context, lane=lane)
        self.running[claim.execution.composite_key] = running
        assert self._job_nursery is not None
        self._job_nursery.start_soon(self._run_job, running, name=f"job:{claim.job_id}")

    # -- running -----------------------------------------------------------------

    async def _run_job(self, running: RunningJob) -> None:
        claim = running.claim
        # This task's log lines (and its threads') carry the job id and the request id
        # that enqueued it.
        logs.job_id.set(claim.job_id)
        logs.request_id.set((claim.job.meta or {}).get("request_id"))
        try:
            with running.scope:
                outcome = await self._execute(running)
                if running.requeued:
                    return
                running.settling = True
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(self._record, running, outcome)
        except Exception:
            # Our own failure (Redis down while recording, say): the started-registry
            # entry stays, expires, and the job is re-queued by a reaper.
            log.exception("worker %s could not settle job %s", self.name, claim.job_id)
        finally:
            self.running.pop(claim.execution.composite_key, None)
            assert running.lane is not None
            running.lane.slots.release()

    async def _execute(self, running: RunningJob) -> _Success | _Failure | _Requeue:
        claim, context = running.claim, running.context
        try:
            context.name = claim.job.func_name or ""
            context.ids = tuple(claim.job.args)
            spec = job_table.resolve(context.name)
        except job_table.UnknownJob as exc:
            return _Failure(f"UnknownJob: {exc}")
        except Exception as exc:  # undecodable job data
            return _Failure(reasons.describe(exc))
        # The finished/failed line carries the outcome and duration: "started" is detail.
        log.debug("job %s %s%r started", claim.job_id, spec.name, context.ids)
        token = job_table.bind_context(context)
        try:
            with trio.move_on_after(context.timeout) as timer:
                if spec.is_async:
                    value = await spec.function(*context.ids)
                else:
                    value = await self._call_in_thread(running, spec.function, context.ids)
            if timer.cancelled_caught:
                context.cancel()
                return _Failure(reasons.timed_out(context.timeout))
            return _Success(value)
        except WorkerStopping as exc:
            return _Requeue(str(exc) or "worker stopping")
        except Exception as exc:
            return _Failure(reasons.describe(exc))
        finally:
            job_table._current.reset(token)

    async def _call_in_thread(self, running: RunningJob, function: Callable[..., Any],
                              args: tuple[Any, ...]) -> Any:
        assert running.lane is not None
        try:
            return await trio.to_thread.run_sync(self._thread_body, running, function, args,
                                                 abandon_on_cancel=True,
                                                 limiter=running.lane.threads)
        except trio.Cancelled:
            with self._thread_lock:
                running.abandoned = True
                if not running.thread_done:
                    self.abandoned_threads += 1
            running.context.cancel()
            log.warning("job %s: thread abandoned (still running: %d abandoned thread(s))",
                        running.claim.job_id, self.abandoned_threads)
            raise

    def _thread_body(self, running: RunningJob, function: Callable[..., Any],
                     args: tuple[Any, ...]) -> Any:
        try:
            return job_table.call_with_database(function, *args)
        finally:
            with self._thread_lock:
                running.thread_done = True
                if running.abandoned:
                    self.abandoned_threads -= 1

    def _record(self, running: RunningJob, outcome: _Success | _Failure | _Requeue) -> None:
        claim = running.claim
        elapsed = time.monotonic() - running.started
        name = running.context.name
        fields = {"event": "job", "job": name, "queue": claim.queue.name,
                  "duration_ms": round(elapsed * 1000, 2), "worker": self.name}
        with running.lock:
            if isinstance(outcome, _Success):
                lifecycle.record_success(self.client, claim, outcome.value, self.name)
                metrics.job_finished(name, "succeeded", elapsed)
                # Upkeep the scheduler queues every few seconds (one job id per name) would
                # fill the log with good news: its successes are detail.
                upkeep = claim.job_id.endswith("-" + jobs_service.logical_job_id(name))
                log.log(logging.DEBUG if upkeep else logging.INFO,
                        "job %s %s finished in %.2fs", claim.job_id, name, elapsed,
                        extra={**fields, "outcome": "succeeded"})
            elif isinstance(outcome, _Failure):
                lifecycle.record_failure(self.client, claim, outcome.reason, self.name)
                metrics.job_finished(name, "failed", elapsed)
                log.warning("job %s %s failed after %.2fs: %s", claim.job_id, name, elapsed,
                            outcome.reason.splitlines()[0],
                            extra={**fields, "outcome": "failed"})
            else:
                lifecycle.requeue(self.client, claim.queue, claim.job_id, claim.execution.id)
                metrics.job_finished(name, "requeued", elapsed)
                log.info("job %s %s re-queued: %s", claim.job_id, name, outcome.why,
                         extra={**fields, "outcome": "requeued"})
            running.recorded = True

    # -- shutdown ----------------------------------------------------------------

    async def _drain(self) -> None:
        with trio.move_on_at(self._deadline) as self._drain_scope:
            while self.running:
                await trio.sleep(0.02)
        leftovers = [r for r in self.running.values() if not r.settling and not r.requeued]
        for running in leftovers:
            running.requeued = True
            running.context.cancel()
            running.scope.cancel()
            claim = running.claim
            with trio.CancelScope(shield=True):
                try:
                    await _retrying(partial(self._requeue_running, running))
                    log.warning("job %s re-queued at shutdown after %.1fs", claim.job_id,
                                time.monotonic() - running.started)
                except redis.RedisError as exc:
                    log.error("job %s could not be re-queued (%s); it will be once this "
                              "worker's heartbeat expires", claim.job_id, exc)
        with trio.move_on_after(5):
            while self.running:  # cancelled jobs unwinding, settling ones recording
                await trio.sleep(0.02)
        # A claim whose answer Redis lost never reached self.running: it is marked started
        # under this worker's name, and would wait for this worker's heartbeat to expire.
        with trio.CancelScope(shield=True):
            try:
                handed = await _retrying(partial(
                    lifecycle.reap_abandoned, self.client, self.queues, me=self.name,
                    mine=frozenset(self.running), leaving=True))
            except redis.RedisError as exc:
                log.error("worker %s could not hand back its claims (%s); they go back once "
                          "its heartbeat expires", self.name, exc)
            else:
                if handed:
                    log.warning("worker %s handed back %d claim(s) it never ran: %s",
                                self.name, len(handed), ", ".join(handed))

    def _requeue_running(self, running: RunningJob) -> None:
        claim = running.claim
        with running.lock:  # not while a heartbeat renews this execution
            lifecycle.requeue(self.client, claim.queue, claim.job_id, claim.execution.id)

    # -- heartbeats --------------------------------------------------------------

    def _status_fields(self) -> dict[str, Any]:
        return {
            "state": "busy" if self.running else "idle",
            "capacity": self.settings.capacity,
            "running": len(self.running),
            "tasks": ",".join(sorted(self.tasks)),
            "abandoned_threads": self.abandoned_threads,
            "draining": int(not self._taking_work),
        }

    def _beat(self, fields: dict[str, Any], running: list[RunningJob]) -> None:
        ttl = self.settings.worker_ttl
        with self.client.pipeline() as pipe:
            self.identity.heartbeat(pipe, ttl, fields)
            pipe.execute()
        for job in running:
            with job.lock:
                if job.recorded or job.requeued:
                    continue
                with self.client.pipeline() as pipe:
                    lifecycle.heartbeat(pipe, job.claim, ttl)
                    pipe.execute()

    async def _heartbeat_loop(self) -> None:
        while True:
            await trio.sleep(self.settings.heartbeat_seconds)
            running = [r for r in self.running.values() if not r.settling and not r.requeued]
            try:
                await trio.to_thread.run_sync(self._beat, self._status_fields(), running)
            except redis.RedisError as exc:
                log.error("worker %s heartbeat failed: %s", self.name, exc)
            await self._reap()

    async def _reap(self) -> None:
        try:
            requeued = await trio.to_thread.run_sync(partial(
                lifecycle.reap_abandoned, self.client, self.queues, me=self.name,
                mine=frozenset(self.running)))
        except redis.RedisError as exc:
            log.error("worker %s could not check for abandoned jobs: %s", self.name, exc)
            return
        if requeued:
            log.warning("re-queued %d job(s) abandoned by dead workers: %s", len(requeued),
                        ", ".join(requeued))

    # -- long-lived tasks --------------------------------------------------------

    async def start_task(self, name: str, async_fn: Callable[..., Awaitable[Any]],
                         *args: Any) -> bool:
        """Run ``async_fn(*args)`` as long-lived task ``name``; False if one already runs."""
        # Refused as soon as the worker stops taking work (shutdown or drain), not only
        # once its claim loop has wound down: the task would be cancelled at once anyway.
        if not self._accepting_tasks or not self._taking_work or self._task_nursery is None:
            raise WorkerStopping(f"worker {self.name} is stopping; task {name!r} not started")
        if name in self.tasks:
            return False
        task = LongTask(name=name)
        self.tasks[name] = task
        self._task_nursery.start_soon(self._run_task, task, async_fn, args, name=f"task:{name}")
        return True

    async def stop_task(self, name: str) -> bool:
        """Cancel task ``name`` and wait for it to end; False if no such task runs."""
        task = self.tasks.get(name)
        if task is None:
            return False
        task.scope.cancel()
        await task.done.wait()
        return True

    def task_names(self) -> list[str]:
        """Names of the long-lived tasks running now."""
        return sorted(self.tasks)

    async def _run_task(self, task: LongTask, async_fn: Callable[..., Awaitable[Any]],
                        args: tuple[Any, ...]) -> None:
        try:
            with task.scope:
                await async_fn(*args)
            log.info("task %s ended", task.name)
        except Exception:
            log.exception("task %s crashed", task.name)
        finally:
            if self.tasks.get(task.name) is task:
                del self.tasks[task.name]
            task.done.set()

    def _cancel_all_tasks(self) -> None:
        for task in list(self.tasks.values()):
            task.scope.cancel()


def main(settings: Settings) -> None:
    """Entry point of ``copytrade worker``: build the runtime, bind the database, serve."""
    import os

    from models import database

    logs.configure(settings.logging.level, settings.logging.format)
    # `kill -USR1 <pid>` prints every thread's stack to stderr: what a stuck worker waits on.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    multiproc_dir = settings.metrics.multiproc_dir
    if settings.worker.metrics_port:
        # A worker on its own machine: scraped directly (same token rule as the web).
        metrics.serve_worker_metrics(settings.worker.metrics_host, settings.worker.metrics_port,
                                     settings.metrics.token, multiproc_dir)
    built = wiring.build_runtime(settings)
    process_runtime.install(built)
    # The copy engine folds SQLite's log between fills (models.database.fold_log).
    database.bind(settings.database_url, fold_on_commit=False)
    job_table.load_modules(settings.worker.job_modules)
    host = WorkerHost(dataclasses.replace(WorkerSettings.from_settings(settings, built.redis_url),
                                          startup_tasks=True))
    try:
        trio.run(partial(host.run, install_signal_handlers=True))
    finally:
        metrics.process_exited(os.getpid(), multiproc_dir)
        process_runtime.close()


async def _retrying(call: Callable[[], Any]) -> Any:
    """``call()`` in a thread, tried again on a Redis error (it must be safe to repeat)."""
    for attempt in range(1, SHUTDOWN_TRIES + 1):
        try:
            return await trio.to_thread.run_sync(call)
        except redis.RedisError as exc:
            if attempt == SHUTDOWN_TRIES:
                raise
            log.warning("Redis error at shutdown (%s); trying again", exc)
            await trio.sleep(SHUTDOWN_RETRY_SECONDS)
