"""Place an order as an MCP task and follow it (protocol 2025-11-25, plain JSON-RPC).

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
HEADERS = {"Authorization": f"Bearer {os.environ['COPYTRADE_KEY']}",
           "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": "2025-11-25"}


def call(http: httpx2.Client, method: str, params: dict) -> dict:
    """One JSON-RPC request; its result (or the error, raised)."""
    answer = http.post(URL, json={"jsonrpc": "2.0", "id": str(uuid.uuid4()),
                                  "method": method, "params": params}).json()
    if "error" in answer:
        raise RuntimeError(answer["error"]["message"])
    return answer["result"]


with httpx2.Client(headers=HEADERS, timeout=60) as http:
    order = {"token_id": os.environ["TOKEN_ID"], "side": "buy", "size": "10",
             "order_type": "limit", "price": "0.05"}
    quote = call(http, "tools/call", {"name": "preview_market_order", "arguments": order})
    arguments = {**order, "preview_id": quote["structuredContent"]["preview_id"],
                 "idempotency_key": str(uuid.uuid4())}
    # "task" asks for a task instead of waiting for the answer.
    created = call(http, "tools/call", {"name": "place_market_order",
                                        "arguments": arguments, "task": {"ttl": 3600000}})
    task_id = created["task"]["taskId"]
    print("created:", created["task"]["status"], created["task"]["statusMessage"])
    task = call(http, "tasks/get", {"taskId": task_id})
    print("now:", task["status"], task["statusMessage"])
    task = call(http, "tasks/cancel", {"taskId": task_id})
    print("after cancel:", task["status"])
    result = call(http, "tasks/result", {"taskId": task_id})
    print(json.dumps(result["structuredContent"]))
