"""The job table: job names mapped to the functions the worker runs for them.

The web enqueues ``services.platform.jobs.enqueue("withdrawals.send", withdrawal_id)``; the
worker resolves the name here. A job function takes the IDs it was enqueued with.

Contract for every job function:

- It receives IDs, never objects, and loads what it needs itself.
- It may run more than once for one enqueue (after a worker crash, or when a
  shutdown re-queues it), so it must do its work once: check durable state
  before acting, use idempotency keys for anything leaving the process.
- A plain ``def`` runs in a worker thread inside its own database connection
  (``db.connection_context()``). An ``async def`` runs on the worker's Trio loop
  and must not call blocking code directly: use ``in_thread`` for database work.
- When the worker gives up on it (timeout, shutdown), an async job is cancelled;
  a thread cannot be killed, so a sync job is abandoned and should call
  ``current_job().check()`` between steps to stop early.
"""

from __future__ import annotations

import contextvars
import importlib
import inspect
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import trio

from models.base import db

JOB_MODULES: tuple[str, ...] = ("worker.builtin_jobs", "worker.jobs_wallets", "worker.maintenance",
                                "worker.copy_engine.jobs", "worker.jobs_trading",
                                "worker.jobs_notifications", "worker.jobs_copying")
"""Modules whose ``@job`` functions make up the production job table."""

"""Comma-separated extra modules to import at worker start (tests, plugins)."""


class UnknownJob(LookupError):
    """No job of that name is in the table."""


class JobCancelled(Exception):
    """The worker gave up on this job (timeout or shutdown); stop working."""


@dataclass(frozen=True)
class JobSpec:
    """One entry of the job table."""

    name: str
    function: Callable[..., Any]
    is_async: bool


_table: dict[str, JobSpec] = {}


def job(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as job ``name``."""

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        spec = JobSpec(name=name, function=function,
                       is_async=inspect.iscoroutinefunction(function))
        known = _table.get(name)
        if known is not None and known.function is not function:
            raise ValueError(f"job {name!r} is already registered to {known.function!r}")
        _table[name] = spec
        return function

    return register


_startup: dict[str, Callable[..., Any]] = {}


def on_worker_start(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``async fn(host)`` to run as long-lived task ``name`` in every worker."""

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        _startup[name] = function
        return function

    return register


def startup_tasks() -> dict[str, Callable[..., Any]]:
    """The long-lived tasks every worker starts (name -> ``async fn(host)``)."""
    return dict(_startup)


def resolve(name: str) -> JobSpec:
    """The spec registered as ``name``; raises UnknownJob."""
    try:
        return _table[name]
    except KeyError:
        raise UnknownJob(f"unknown job {name!r}: no such name in the worker's job table") from None


def names() -> list[str]:
    """Every registered job name, sorted."""
    return sorted(_table)


def load_modules(extra: str | Sequence[str] = ()) -> list[str]:
    """Import the production job modules and ``extra`` ones (COPYTRADE_JOB_MODULES's list)."""
    listed = extra.split(",") if isinstance(extra, str) else extra
    modules = [*JOB_MODULES, *(m.strip() for m in listed if m.strip())]
    for module in modules:
        importlib.import_module(module)
    return modules


class JobHost(Protocol):
    """What a job may know of the worker running it (``worker.host.WorkerHost`` is one)."""

    name: str


@dataclass
class JobContext:
    """What a running job may know about its own run: ids, deadline, cancellation."""

    job_id: str
    name: str
    ids: tuple[Any, ...]
    timeout: float
    host: JobHost | None = None
    deadline: float = field(default=0.0)  # time.monotonic() when the worker gives up
    _cancelled: threading.Event = field(default_factory=threading.Event, repr=False)

    def __post_init__(self) -> None:
        if not self.deadline:
            self.deadline = time.monotonic() + self.timeout

    def cancel(self) -> None:
        """Tell the job the worker gave up on it."""
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        """True once the worker gave up on the job or its deadline passed."""
        return self._cancelled.is_set() or time.monotonic() >= self.deadline

    def remaining(self) -> float:
        """Seconds left before the deadline (never negative)."""
        return max(0.0, self.deadline - time.monotonic())

    def check(self) -> None:
        """Raise JobCancelled if the worker gave up on this job."""
        if self.cancelled:
            raise JobCancelled(f"job {self.job_id} was cancelled by the worker")


_current: contextvars.ContextVar[JobContext] = contextvars.ContextVar("copytrade_job")


def current_job() -> JobContext:
    """The context of the job running in this thread or task; LookupError outside a job."""
    return _current.get()


def bind_context(context: JobContext) -> contextvars.Token[JobContext]:
    """Make ``context`` the current job's (the worker calls this before running a job)."""
    return _current.set(context)


def call_with_database(function: Callable[..., Any], *args: Any) -> Any:
    """Call ``function(*args)`` inside one database connection (opened and closed here)."""
    with db.connection_context():
        return function(*args)


async def in_thread(function: Callable[..., Any], *args: Any) -> Any:
    """From an async job: run blocking ``function(*args)`` in a thread with a DB connection."""
    return await trio.to_thread.run_sync(call_with_database, function, *args)
