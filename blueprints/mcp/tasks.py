"""MCP tasks over our order lifecycle (services/trading/agent_tasks.py), in both shapes:

- **2025-11-25** (core, the shapes the SDK models): a task-augmented ``tools/call`` of a
  money tool answers ``{task}``; ``tasks/get``, ``tasks/list``, ``tasks/result`` and
  ``tasks/cancel`` read and steer it. Clients that send no ``task`` get the usual answer.
- **2026-07-28** (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663; the SDK has
  no types for it): server-directed. When a request's client capabilities list the
  extension, a ``tools/call`` of a tool with task support that ran (confirmed, if it moves
  money) answers a CreateTaskResult, ``resultType: "task"`` with the task's fields at the
  top level (``taskId``, ``status``, ``statusMessage``, ``createdAt``, ``lastUpdatedAt``,
  ``ttlMs``, ``pollIntervalMs``); ``tasks/get`` answers the task, with ``result`` (the
  CallToolResult) once completed or ``error`` once failed; ``tasks/cancel`` answers an
  empty result. The extension has no ``tasks/list`` nor ``tasks/result``: answered -32601.
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
EXTENSION = "io.modelcontextprotocol/tasks"
MODERN_METHODS = ("tasks/get", "tasks/cancel")
CAPABILITY = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
RELATED_TASK = "io.modelcontextprotocol/related-task"


def created(principal: Principal, params: dict[str, Any], result: dict[str, Any]
            ) -> dict[str, Any]:
    """The CreateTaskResult for a call that asked for a task (a plain answer otherwise)."""
    if not _supports_tasks(params.get("name")):
        return result  # a tool without task support answers as usual
    ttl = params["task"].get("ttl")
    task = agent_tasks.create(principal.user, str(params["name"]), result,
                              ttl_ms=ttl if isinstance(ttl, int) else None)
    return {"task": task.as_json()}


def _supports_tasks(name: Any) -> bool:
    entry = catalogue(current_app).get(str(name))
    return entry is not None and "execution" in entry.definition


def wanted(capabilities: Any) -> bool:
    """Whether a 2026-07-28 request's client capabilities list the tasks extension."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


def created_modern(principal: Principal, params: dict[str, Any], result: dict[str, Any]
                   ) -> dict[str, Any]:
    """The 2026-07-28 CreateTaskResult for a call that ran; its plain answer when it failed
    at once (nothing to follow) or its tool has no task support."""
    if result.get("isError") or not _supports_tasks(params.get("name")):
        return result
    task = agent_tasks.create(principal.user, str(params["name"]), result, ttl_ms=None)
    return {**_modern_task(task), "resultType": "task"}


def _modern_task(view: agent_tasks.TaskView) -> dict[str, Any]:
    """A Task in the extension's shape: the 2025-11-25 fields with ``Ms`` units named."""
    shown = view.as_json()
    shown["ttlMs"] = shown.pop("ttl")
    shown["pollIntervalMs"] = shown.pop("pollInterval")
    return shown


def handle_modern(principal: Principal, method: str, params: dict[str, Any]
                  ) -> dict[str, Any]:
    """Answer one 2026-07-28 tasks/get or tasks/cancel for the caller's own tasks."""
    try:
        task = agent_tasks.get(principal.user, _task_id(params))
        if method == "tasks/cancel":
            agent_tasks.cancel(principal.user, task.id)
            return {}
        current = agent_tasks.view(task)
        shown = _modern_task(current)
        if current.status == "completed":
            shown["result"] = agent_tasks.result_of(task)
        elif current.status == "failed":
            shown["error"] = {"code": protocol.INTERNAL_ERROR,
                              "message": f"The order failed: {current.message}."}
        return shown
    except errors.CopytradeError as err:
        raise JsonRpcError(protocol.INVALID_PARAMS, err.message, data=err.to_dict()) from None


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
