"""Control nudges about copy configs: the ``copy.sync`` job and the engines' pub/sub channel.

The web side only nudges: ``publish`` enqueues the ``copy.sync`` control job (which
wakes an engine to sweep at once) and posts on a pub/sub channel the owning engine
listens to. Engines also sweep the database every second, so a lost nudge only costs
latency, never correctness. Who runs which target is ``services/platform/copy_leases.py``.
"""

from __future__ import annotations

import json
from typing import Any

import redis

from services.platform import jobs

CONTROL_JOB = "copy.sync"


def prefix() -> str:
    """The deployment's Redis key prefix."""
    return jobs.current_config().prefix


def connection() -> redis.Redis:
    """The shared Redis client."""
    return jobs.connection()


def channel(key_prefix: str | None = None) -> str:
    """The pub/sub channel engines listen on for config changes."""
    return f"{key_prefix if key_prefix is not None else prefix()}copy:control"


def publish(op: str, config_id: str) -> None:
    """Nudge the workers about a config change (``copy.start``/``stop``/``reload``)."""
    client = connection()
    client.publish(channel(), json.dumps({"op": op, "config_id": config_id}))
    jobs.enqueue(CONTROL_JOB, config_id, queue="high", timeout=30,
                 job_id=jobs.logical_job_id(CONTROL_JOB, config_id))


def decode_message(message: Any) -> dict[str, Any] | None:
    """A control message from the pub/sub channel, or None when it is not one."""
    if not isinstance(message, dict) or message.get("type") != "message":
        return None
    try:
        return json.loads(message["data"])
    except (TypeError, ValueError):
        return None
