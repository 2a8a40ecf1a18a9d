"""The copy engine inside ``copytrade worker``: started with the worker, nudged by control jobs.

Every worker runs one engine (a long-lived task in the host's nursery). ``copy.sync`` is
the control job the web enqueues when a config is started, stopped or edited: whichever
worker runs it makes its engine sweep at once; the engine owning the config's target
also hears the pub/sub nudge. Both are idempotent: a sweep reads the database.
"""

from __future__ import annotations

import logging
from typing import Any

from services.platform.runtime import runtime
from worker.copy_engine.engine import CopyEngine
from worker.jobs import current_job, job, on_worker_start

log = logging.getLogger("copytrade.copy_engine")

_engines: dict[str, CopyEngine] = {}


def engine_for(host: Any) -> CopyEngine | None:
    """The engine running in ``host`` (a WorkerHost), if any."""
    return _engines.get(host.name) if host is not None else None


@on_worker_start("copy-engine")
async def run_engine(host: Any) -> None:
    """Run this worker's copy engine until the worker stops."""
    engine = CopyEngine(host.name, host.client, host.settings.prefix,
                        runtime().settings.engine)
    _engines[host.name] = engine
    try:
        await engine.run()
    finally:
        _engines.pop(host.name, None)


@job("copy.sync")
async def sync_config(config_id: str) -> dict[str, Any]:
    """A config changed (start, stop, edit): make this worker's engine sweep now."""
    engine = engine_for(current_job().host)
    if engine is None:
        return {"config_id": config_id, "engine": None}
    engine.wake()
    return {"config_id": config_id, "engine": engine.name}
