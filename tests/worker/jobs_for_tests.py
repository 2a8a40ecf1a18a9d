"""Jobs the worker tests enqueue; the worker imports them via COPYTRADE_JOB_MODULES."""

from __future__ import annotations

import threading
import time

import trio

from models.user import User
from services.platform import jobs as jobs_service
from worker.jobs import current_job, job


def marker(name: str) -> str:
    """A Redis key under this run's prefix, for jobs to leave traces tests can read."""
    return f"{jobs_service.current_config().prefix}test:{name}"


@job("test.add")
def add(a: int, b: int) -> dict[str, object]:
    """Add two numbers in a worker thread."""
    return {"sum": a + b, "main_thread": threading.current_thread() is threading.main_thread()}


@job("test.async_echo")
async def async_echo(value: str) -> dict[str, object]:
    """Echo on the Trio loop."""
    await trio.sleep(0)
    trio.lowlevel.current_trio_token()  # raises outside the loop's thread
    return {"echo": value, "main_thread": threading.current_thread() is threading.main_thread()}


@job("test.fail")
def fail(what: str) -> None:
    """Fail with a message quoting a URL with credentials."""
    raise ValueError(f"boom {what} at https://alice:hunter2@rpc.example/v1?api_key=s3cr3t")


@job("test.sleep")
def sleep(seconds: str) -> str:
    """Sleep in small steps, stopping early (and saying so) when the worker gives up."""
    context = current_job()
    until = time.monotonic() + float(seconds)
    while time.monotonic() < until:
        if context.cancelled:
            jobs_service.connection().set(marker(f"cancelled:{context.job_id}"), "1", ex=60)
            return "cancelled"
        time.sleep(0.02)
    return "slept"


@job("test.async_sleep")
async def async_sleep(seconds: str) -> str:
    """Sleep on the loop."""
    await trio.sleep(float(seconds))
    return "slept"


@job("test.concurrent")
def concurrent(tag: str) -> None:
    """Count how many of these run at the same time."""
    client = jobs_service.connection()
    active = client.incr(marker("active"))
    client.set(marker("max_active"), max(active, int(client.get(marker("max_active")) or 0)))
    time.sleep(0.4)
    client.decr(marker("active"))


@job("test.count")
def count(name: str) -> int:
    """Count runs under ``name``."""
    return int(jobs_service.connection().incr(marker(f"runs:{name}")))


@job("test.sleep_once")
def sleep_once(name: str) -> str:
    """Hang on its first run (the worker is killed meanwhile); return at once after."""
    runs = jobs_service.connection().incr(marker(f"runs:{name}"))
    if runs == 1:
        time.sleep(60)
    return f"run {runs}"


@job("test.db_user")
def db_user(email: str) -> str:
    """Create the user with ``email`` once, however often this runs."""
    user, _created = User.get_or_create(email=email)
    return str(user.id)


async def ticker(name: str) -> None:
    """A long-lived task: tick until cancelled, then say it stopped."""
    client = jobs_service.connection()
    try:
        while True:
            await trio.to_thread.run_sync(client.incr, marker(f"ticks:{name}"))
            await trio.sleep(0.02)
    finally:
        client.set(marker(f"stopped:{name}"), "1", ex=60)


@job("test.start_ticker")
async def start_ticker(name: str) -> bool:
    """A control job: start the ticker task ``name``."""
    host = current_job().host
    assert host is not None
    return await host.start_task(f"ticker:{name}", ticker, name)


@job("test.stop_ticker")
async def stop_ticker(name: str) -> bool:
    """A control job: stop the ticker task ``name``."""
    host = current_job().host
    assert host is not None
    return await host.stop_task(f"ticker:{name}")


@job("test.start_ticker_late")
async def start_ticker_late(name: str) -> bool:
    """A control job that asks for a task only after the worker began shutting down."""
    host = current_job().host
    assert host is not None
    while host._taking_work:
        await trio.sleep(0.01)
    return await host.start_task(f"ticker:{name}", ticker, name)
