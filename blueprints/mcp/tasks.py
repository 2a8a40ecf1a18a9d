"""MCP tasks (2025-11-25 shapes, the ones the SDK models): a task-augmented ``tools/call``
of a money tool answers ``{task}``; ``tasks/get``, ``tasks/list``, ``tasks/result`` and
``tasks/cancel`` read and steer it. The status is our order lifecycle's
(services/trading/agent_tasks.py). Clients that send no ``task`` get the usual answer.
"""

from __future__ import annotations

from typing import Any

from flask import current_app

from blueprints.mcp import protocol
from blueprints.mcp.catalogue import catalogue
from blueprints.mcp.protocol import JsonRpcError
from services.platform import errors
from services.platform.principal import Principal
from services.trading import agent_tasks

METHODS = ("tasks/get", "tasks/list", "tasks/result", "tasks/cancel")
VERSIONS = ("2025-11-25",)  # tasks came with it; 2026-07-28 moved them to an extension
CAPABILITY = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
RELATED_TASK = "io.modelcontextprotocol/related-task"


def created(principal: Principal, params: dict[str, Any], result: dict[str, Any]
            ) -> dict[str, Any]:
    """The CreateTaskResult for a call that asked for a task (a plain answer otherwise)."""
    entry = catalogue(current_app).get(str(params.get("name")))
    if entry is None or "execution" not in entry.definition:
        return result  # a tool without task support answers as usual
    ttl = params["task"].get("ttl")
    task = agent_tasks.create(principal.user, entry.tool.name, result,
                              ttl_ms=ttl if isinstance(ttl, int) else None)
    return {"task": task.as_json()}


def _task_id(params: dict[str, Any]) -> str:
    task_id = params.get("taskId")
    if not isinstance(task_id, str):
        raise JsonRpcError(protocol.INVALID_PARAMS, "params.taskId (a string) is required.")
    return task_id


def handle(principal: Principal, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Answer one tasks/* request for the caller's own tasks."""
    try:
        if method == "tasks/list":
            return {"tasks": [view.as_json() for view in agent_tasks.listing(principal.user)]}
        task = agent_tasks.get(principal.user, _task_id(params))
        if method == "tasks/get":
            return agent_tasks.view(task).as_json()
        if method == "tasks/cancel":
            return agent_tasks.cancel(principal.user, task.id).as_json()
        current = agent_tasks.view(task)
        if current.status not in agent_tasks.TERMINAL:
            raise JsonRpcError(protocol.INVALID_PARAMS,
                               f"The task is still {current.message}: poll tasks/get until it "
                               "ends, then ask for its result.")
        result = agent_tasks.result_of(task)
        result.setdefault("_meta", {})[RELATED_TASK] = {"taskId": str(task.id)}
        return result
    except errors.CopytradeError as err:
        raise JsonRpcError(protocol.INVALID_PARAMS, err.message, data=err.to_dict()) from None
