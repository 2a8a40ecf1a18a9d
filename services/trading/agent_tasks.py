"""MCP tasks over our order lifecycle (issue 47): a task follows the order one call placed.

A task is saved after its call answered (the call runs as it always does); its status is
read, each time, from the order and trade rows the placing and reconciling code keep
(services/trading/order_states.py): recorded, sent, delayed, resting, then matched, mined
and retrying while working; confirmed is ``completed``; failed, rejected or a FAILED
settlement is ``failed``; cancelled (with nothing filled) is ``cancelled``. A call that
moves no order (a claim, a config) completes at once with its answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from models.agents import AgentTask
from models.base import utcnow
from models.trading import (
    ORDER_CANCELLED,
    ORDER_DELAYED,
    ORDER_FAILED,
    ORDER_LIVE,
    ORDER_OPEN,
    ORDER_PENDING,
    ORDER_REJECTED,
    Order,
    Trade,
)
from services.platform import errors
from services.platform.principal import user_id_of
from services.trading import order_cancels

POLL_INTERVAL_MS = 2000
TERMINAL = ("completed", "failed", "cancelled")


@dataclass(frozen=True)
class TaskView:
    """A task as MCP shows it: status, a message in our own words, and timestamps."""

    task: AgentTask
    status: str
    message: str
    updated_at: datetime

    def as_json(self) -> dict[str, Any]:
        """The MCP Task object."""
        return {"taskId": str(self.task.id), "status": self.status,
                "statusMessage": self.message, "createdAt": self.task.created_at.isoformat(),
                "lastUpdatedAt": self.updated_at.isoformat(), "ttl": self.task.ttl_ms,
                "pollInterval": POLL_INTERVAL_MS}


def create(user: Any, tool: str, result: dict[str, Any], *, ttl_ms: int | None) -> TaskView:
    """Save the answer of a task-augmented call, following the order it placed, if any."""
    structured = result.get("structuredContent") or {}
    order_hash = None if result.get("isError") else structured.get("order_id")
    task = AgentTask.create(user_id=user_id_of(user), tool=tool, order_hash=order_hash,
                            result=json.dumps(result), failed=bool(result.get("isError")),
                            created_at=utcnow(), ttl_ms=ttl_ms)
    return view(task)


def _order_stage(order: Order, trade: Trade | None) -> tuple[str, str]:
    settlement = trade.settlement if trade is not None else None
    if order.status == ORDER_PENDING:
        return "working", "sent" if order.submitted_at else "recorded"
    if order.status == ORDER_DELAYED:
        return "working", "delayed"
    if order.status == ORDER_LIVE:
        return "working", "resting on the book"
    if order.status in (ORDER_REJECTED, ORDER_FAILED) or settlement == "failed":
        return "failed", order.error or settlement or order.status
    if order.status == ORDER_CANCELLED and not order.filled_size:
        return "cancelled", "cancelled"
    if settlement == "confirmed":
        return "completed", "confirmed"
    return "working", settlement or "matched"


def view(task: AgentTask) -> TaskView:
    """The task's status now, read from its order."""
    if task.order_hash is None:
        status = "failed" if task.failed else "completed"
        return TaskView(task, status, status, task.created_at)
    order = Order.get_or_none(Order.order_hash == task.order_hash)
    if order is None:
        return TaskView(task, "failed", "the order is not recorded", task.created_at)
    trade = Trade.get_or_none(Trade.order == order.id)
    status, message = _order_stage(order, trade)
    return TaskView(task, status, message, max(order.updated_at, task.created_at))


def get(user: Any, task_id: Any) -> AgentTask:
    """One of the user's tasks; ValidationFailed naming taskId for any other."""
    try:
        key = UUID(str(task_id))
    except ValueError:
        key = None
    task = None if key is None else AgentTask.get_or_none(
        AgentTask.id == key, AgentTask.user_id == user_id_of(user))
    if task is None:
        raise errors.ValidationFailed("No such task.", fields={"taskId": ["Unknown task."]})
    return task


def listing(user: Any, limit: int = 50) -> list[TaskView]:
    """The user's tasks, newest first."""
    return [view(task) for task in AgentTask.select()
            .where(AgentTask.user_id == user_id_of(user))
            .order_by(AgentTask.created_at.desc()).limit(limit)]


def result_of(task: AgentTask) -> dict[str, Any]:
    """The CallToolResult the task's call answered."""
    return json.loads(task.result)


def cancel(user: Any, task_id: Any) -> TaskView:
    """Cancel the task's order while it is open; ValidationFailed once the task has ended."""
    task = get(user, task_id)
    current = view(task)
    order = (Order.get_or_none(Order.order_hash == task.order_hash)
             if task.order_hash else None)
    if current.status in TERMINAL or order is None or order.status not in ORDER_OPEN:
        raise errors.ValidationFailed(f"The task is {current.status} ({current.message}); "
                                      "only an order still open can be cancelled.",
                                      fields={"taskId": ["Not cancellable."]})
    order_cancels.cancel_order(user, task.order_hash)
    return view(AgentTask.get_by_id(task.id))
