"""The copy engine inside ``copytrade worker``: started with the worker, nudged by control jobs.

Every worker runs one engine (a long-lived task in the host's nursery). ``copy.sync`` is
the control job the web enqueues when a config is started, stopped or edited: whichever
worker runs it makes its engine sweep at once; the engine owning the config's target
also hears the pub/sub nudge. Both are idempotent: a sweep reads the database.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import config as settings_module
from services import venues
from worker.copy_engine.engine import CopyEngine, EngineSettings
from worker.jobs import current_job, job, on_worker_start

log = logging.getLogger("copytrade.copy_engine")

_engines: dict[str, CopyEngine] = {}


def engine_for(host: Any) -> CopyEngine | None:
    """The engine running in ``host`` (a WorkerHost), if any."""
    return _engines.get(host.name) if host is not None else None


def settings_from_env() -> EngineSettings:
    """Engine timings, overridable by COPY_* environment variables (tests use short ones)."""
    env = os.environ
    defaults = EngineSettings()
    return EngineSettings(
        lease_ms=int(env.get("COPY_LEASE_MS", defaults.lease_ms)),
        heartbeat_seconds=float(env.get("COPY_HEARTBEAT_SECONDS", defaults.heartbeat_seconds)),
        sweep_seconds=float(env.get("COPY_SWEEP_SECONDS", defaults.sweep_seconds)),
        poll_seconds=float(env.get("COPY_POLL_SECONDS", defaults.poll_seconds)),
        backstop_poll_seconds=float(env.get("COPY_BACKSTOP_POLL_SECONDS",
                                            defaults.backstop_poll_seconds)),
        exit_check_seconds=float(env.get("COPY_EXIT_CHECK_SECONDS",
                                         defaults.exit_check_seconds)),
        stale_intent_seconds=float(env.get("COPY_STALE_INTENT_SECONDS",
                                           defaults.stale_intent_seconds)),
        use_feed=env.get("COPY_USE_FEED", "1") not in ("0", "false", "no"),
    )


@on_worker_start("copy-engine")
async def run_engine(host: Any) -> None:
    """Run this worker's copy engine until the worker stops."""
    try:
        venues.client()
    except RuntimeError:
        venues.configure(settings_module.load())
    engine = CopyEngine(host.name, host.client, host.settings.prefix, settings_from_env())
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
