"""Waiting for a person's answer to a confirmation, across web processes (issue 47).

A call that asked its client for a form on the client's session waits, in the process
that holds the call's response stream, until the person answers, or the confirmation
expires. The answer arrives on another POST, maybe in another process: the database row
is the truth (agent_confirmations.answer records it), and a Redis message only wakes the
waiter at once; without Redis the waiter still sees the answer at its next read.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any
from uuid import UUID

import redis

from models.agents import AgentConfirmation
from models.base import db, utcnow
from services.identity import agent_confirmations
from services.platform import jobs
from services.platform.principal import Principal

log = logging.getLogger(__name__)


def topic(confirmation_id: UUID) -> str:
    """The Redis channel that wakes the waiter of one confirmation."""
    return f"copytrade:confirmation:{confirmation_id}"


def answer(principal: Principal, confirmation_id: UUID, accepted: bool) -> bool:
    """Record the answer (agent_confirmations.answer) and wake its waiter; whether it counted."""
    counted = agent_confirmations.answer(principal, confirmation_id, accepted)
    if counted:
        try:
            jobs.connection().publish(topic(confirmation_id), "answered")
        except redis.RedisError:  # the waiter reads the row within a second anyway
            log.warning("confirmation %s: answer recorded, waiter not woken", confirmation_id)
    return counted


class Waiter:
    """Follows one confirmation until it is answered or expires.

    Subscribed when made, so an answer recorded afterwards is never missed; between reads
    it holds no database connection (a wait may last the confirmation's 15 minutes)."""

    def __init__(self, confirmation_id: UUID, *, owns_connection: bool = False) -> None:
        self.confirmation_id = confirmation_id
        # The thread's database connection is this request's own: closed for the wait,
        # opened again by ``close`` for the work after it.
        self._owns_connection = owns_connection
        self._reopen = False
        self._pubsub: Any = None
        try:
            self._pubsub = jobs.connection().pubsub(ignore_subscribe_messages=True)
            self._pubsub.subscribe(topic(confirmation_id))
        except redis.RedisError:
            log.warning("confirmation %s: no Redis, waiting by reading", confirmation_id)
            self._pubsub = None

    def settled(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds; True once the row is answered or expired."""
        if self._owns_connection and not self._reopen and not db.is_closed():
            db.close()
            self._reopen = True
        if self._pubsub is not None:
            try:
                self._pubsub.get_message(timeout=timeout)
            except redis.RedisError:
                self._pubsub = None
        else:
            time.sleep(timeout)
        opened = db.connect(reuse_if_open=True)
        try:
            row = AgentConfirmation.get_by_id(self.confirmation_id)
        finally:
            if opened:
                db.close()
        return row.status != "pending" or row.expires_at <= utcnow()

    def close(self) -> None:
        """Unsubscribe, and open the thread's database connection again if the wait closed
        it (idempotent)."""
        if self._pubsub is not None:
            with contextlib.suppress(redis.RedisError):
                self._pubsub.close()
            self._pubsub = None
        if self._reopen:
            db.connect(reuse_if_open=True)
            self._reopen = False
