"""Place an order as an MCP task and follow it (plain JSON-RPC).

Protocol 2025-11-25 by default: the client asks for a task ("task" in tools/call). With
MCP_VERSION=2026-07-28, tasks are the extension io.modelcontextprotocol/tasks: a client
that lists it in its capabilities gets a task (resultType "task") from the server itself.
A resting limit order: the task stays "working" while the order rests on the book; this
script then cancels it with tasks/cancel, the task's end. Run with a key whose owner
turned confirmations off for it (an unattended agent), or see confirm_code.py first.
Run: COPYTRADE_KEY=svck_live_... TOKEN_ID=... python task.py
"""

import json
import os
import uuid

import httpx2

URL = os.environ.get("COPYTRADE_URL", "http://127.0.0.1:8000") + "/api/mcp"
VERSION = os.environ.get("MCP_VERSION", "2025-11-25")
MODERN = VERSION == "2026-07-28"
HEADERS = {"Authorization": f"Bearer {os.environ['COPYTRADE_KEY']}",
           "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": VERSION}
# 2026-07-28: every request carries its version and the client's capabilities.
META = {"io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "task-example", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}}}


def call(http: httpx2.Client, method: str, params: dict) -> dict:
    """One JSON-RPC request; its result (or the error, raised)."""
    headers = {}
    if MODERN:  # the _meta envelope, and method and tool mirrored into headers
        params = {**params, "_meta": META}
        headers["Mcp-Method"] = method
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
    answer = http.post(URL, headers=headers, json={
        "jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}).json()
    if "error" in answer:
        raise RuntimeError(answer["error"]["message"])
    return answer["result"]


with httpx2.Client(headers=HEADERS, timeout=60) as http:
    order = {"token_id": os.environ["TOKEN_ID"], "side": "buy", "size": "10",
             "order_type": "limit", "price": "0.05"}
    quote = call(http, "tools/call", {"name": "preview_market_order", "arguments": order})
    place = {"name": "place_market_order", "arguments": {
        **order, "preview_id": quote["structuredContent"]["preview_id"],
        "idempotency_key": str(uuid.uuid4())}}
    if not MODERN:
        place["task"] = {"ttl": 3600000}  # 2025-11-25: ask for a task instead of waiting
    created = call(http, "tools/call", place)
    # 2026-07-28: the answer is the task itself ("resultType": "task"); 2025-11-25: {task}.
    task = created if MODERN else created["task"]
    task_id = task["taskId"]
    print("created:", task["status"], task["statusMessage"])
    task = call(http, "tasks/get", {"taskId": task_id})
    print("now:", task["status"], task["statusMessage"])
    task = call(http, "tasks/cancel", {"taskId": task_id})
    if MODERN:  # the extension's cancel answers nothing: read the task again
        task = call(http, "tasks/get", {"taskId": task_id})
    print("after cancel:", task["status"])
    if MODERN:  # no tasks/result in the extension: a completed task carries "result"
        print(json.dumps({"taskId": task_id, "pollIntervalMs": task["pollIntervalMs"]}))
    else:
        result = call(http, "tasks/result", {"taskId": task_id})
        print(json.dumps(result["structuredContent"]))
