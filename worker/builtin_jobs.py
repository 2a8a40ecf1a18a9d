"""Jobs every worker serves, whatever else is installed."""

from __future__ import annotations

from worker.jobs import current_job, job


@job("worker.ping")
async def ping() -> dict[str, str]:
    """Answer with the name of the worker that ran it (a liveness probe through the queues)."""
    host = current_job().host
    return {"worker": host.name if host is not None else ""}
