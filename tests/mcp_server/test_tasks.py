"""Orders as MCP tasks (issue 47): a task-augmented place_market_order answers a task whose
status follows the order (delayed, matched, confirmed) to its end; tasks/list, tasks/result
and tasks/cancel (a resting order cancelled at the venue)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any, Literal

import anyio
import pytest
from mcp import Client
from mcp.client.extension import ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    CancelTaskRequest,
    CancelTaskRequestParams,
    CancelTaskResult,
    CreateTaskResult,
    GetTaskPayloadRequest,
    GetTaskPayloadRequestParams,
    GetTaskRequest,
    GetTaskRequestParams,
    GetTaskResult,
    ListTasksRequest,
    ListTasksResult,
    Result,
    TaskMetadata,
)
from pydantic import TypeAdapter

from models.trading import Order
from services.trading import order_reconcile
from tests.mcp_server.conftest import modern_call, rpc, run_client
from tests.mcp_server.test_write_tools import orders_for
from tests.venue_lifecycle import VenueClock, delay_market, hand_moved_clock


@pytest.fixture
def venue_clock(venue_server, venue_control) -> Iterator[VenueClock]:
    with hand_moved_clock(venue_server, venue_control) as clock:
        yield clock


async def place_as_task(client: Client, order: dict[str, Any], url: str, token: str
                        ) -> CreateTaskResult:
    """A task-augmented place_market_order. Sent as the SDK builds it, but posted directly:
    SDK 2.3 checks every tools/call answer against CallToolResult, so it cannot read the
    CreateTaskResult a task-augmented call answers (its tasks/* requests work)."""
    quote = await client.call_tool("preview_market_order", order)
    args = {**order, "preview_id": quote.structured_content["preview_id"],
            "idempotency_key": str(uuid.uuid4())}
    request = CallToolRequest(params=CallToolRequestParams(
        name="place_market_order", arguments=args, task=TaskMetadata(ttl=600_000)))
    message = {"jsonrpc": "2.0", "id": 7,
               **request.model_dump(by_alias=True, mode="json", exclude_none=True)}
    answer = await anyio.to_thread.run_sync(
        lambda: rpc(url, message, token, version="2025-11-25"))
    return CreateTaskResult.model_validate(answer.json()["result"])


async def status_of(client: Client, task_id: str) -> tuple[str, str | None]:
    task = await client.session.send_request(
        GetTaskRequest(params=GetTaskRequestParams(task_id=task_id)), GetTaskResult)
    return task.status, task.status_message


def test_a_delayed_order_is_followed_through_matched_to_confirmed(mcp_url, trader_key, market,
                                                                  venue_control, venue_clock):
    token = trader_key("trade:execute", "read:trades")
    delay_market(venue_control, market.condition_id, 5)
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    seen: list[tuple[str, str | None]] = []

    async def body(client: Client):
        created = await place_as_task(client, order, mcp_url, token)
        task_id = created.task.task_id
        seen.append((created.task.status, created.task.status_message))
        try:
            await client.session.send_request(GetTaskPayloadRequest(
                params=GetTaskPayloadRequestParams(task_id=task_id)), CallToolResult)
        except MCPError as err:
            early = err.error.message
        venue_clock.advance(5)
        order_reconcile.reconcile_pending(older_than=timedelta(0))
        seen.append(await status_of(client, task_id))
        venue_clock.advance(6)
        order_reconcile.reconcile_pending(older_than=timedelta(0))
        seen.append(await status_of(client, task_id))
        result = await client.session.send_request(GetTaskPayloadRequest(
            params=GetTaskPayloadRequestParams(task_id=task_id)), CallToolResult)
        listed = await client.session.send_request(ListTasksRequest(), ListTasksResult)
        plain = await client.call_tool("list_trades", {"limit": 5})  # no task: as before
        return task_id, early, result, listed, plain

    task_id, early, result, listed, plain = run_client(mcp_url, token, "legacy", body)
    assert seen == [("working", "delayed"), ("working", "matched"),
                    ("completed", "confirmed")]
    assert "still delayed" in early
    order_id = result.structured_content["order_id"]
    assert Order.get(Order.order_hash == order_id).status == "matched"
    assert (result.meta or {})["io.modelcontextprotocol/related-task"]["taskId"] == task_id
    assert [t.task_id for t in listed.tasks] == [task_id]
    assert not plain.is_error and plain.structured_content["trades"]


def test_a_resting_order_task_is_cancelled_at_the_venue(mcp_url, trader_key, market,
                                                        venue_control):
    token = trader_key("trade:execute", "trade:cancel")
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "limit",
             "price": "0.05"}

    async def body(client: Client):
        created = await place_as_task(client, order, mcp_url, token)
        task_id = created.task.task_id
        resting = await status_of(client, task_id)
        cancelled = await client.session.send_request(CancelTaskRequest(
            params=CancelTaskRequestParams(task_id=task_id)), CancelTaskResult)
        try:
            await client.session.send_request(CancelTaskRequest(
                params=CancelTaskRequestParams(task_id=task_id)), CancelTaskResult)
        except MCPError as err:
            again = err.error.message
        return resting, cancelled, again

    resting, cancelled, again = run_client(mcp_url, token, "legacy", body)
    assert resting == ("working", "resting on the book")
    assert cancelled.status == "cancelled"
    assert "only an order still open can be cancelled" in again
    assert Order.get(Order.order_hash == cancelled_order(cancelled)).status == "cancelled"


def cancelled_order(task: CancelTaskResult) -> str:
    from models.agents import AgentTask

    return AgentTask.get_by_id(task.task_id).order_hash


# ---- 2026-07-28: the tasks extension (SEP-2663), server-directed ---------------------------

TERMINAL = ("completed", "failed", "cancelled")
ANY = TypeAdapter(dict[str, Any])


class CreatedTask(Result):
    """The extension's CreateTaskResult: SDK 2.3 has no type for it, so the test names it."""

    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


async def task_get(session: Any, task_id: str) -> dict[str, Any]:
    """tasks/get on the 2026-07-28 wire (the SDK stamps the _meta envelope and headers)."""
    return await session.send_request(
        GetTaskRequest(params=GetTaskRequestParams(task_id=task_id)), ANY)


class FollowTasks(ClientExtension):
    """The tasks extension as a client uses it: a task answer is polled with tasks/get until
    it ends (``between`` runs before each poll), and its result becomes the call's."""

    identifier = "io.modelcontextprotocol/tasks"

    def __init__(self, between: Any = None) -> None:
        self.between = between
        self.seen: list[tuple[str, str | None]] = []

    def claims(self) -> list[ResultClaim[Any]]:
        """The one extra shape: resultType "task" on tools/call."""
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.follow)]

    async def follow(self, created: CreatedTask, ctx: Any) -> CallToolResult:
        """Poll the task to its end; its CallToolResult."""
        self.seen.append((created.status, created.status_message))
        while True:
            if self.between is not None:
                self.between(len(self.seen))
            task = await task_get(ctx.session, created.task_id)
            self.seen.append((task["status"], task.get("statusMessage")))
            if task["status"] in TERMINAL:
                assert task["taskId"] == created.task_id
                return CallToolResult.model_validate(task["result"])


def test_a_confirmed_order_on_2026_is_a_task_followed_to_confirmed(
        mcp_url, trader_key, trader, market, venue_control, venue_clock):
    from tests.mcp_server.test_confirmations import accepting

    token = trader_key("trade:execute", "read:trades", confirm=True)
    delay_market(venue_control, market.condition_id, 5)
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    asked: list[Any] = []

    def settle(polls: int) -> None:  # the venue moves on between the agent's polls
        venue_clock.advance(5 if polls == 1 else 6)
        order_reconcile.reconcile_pending(older_than=timedelta(0))

    tasks = FollowTasks(settle)

    async def body(client: Client):
        quote = await client.call_tool("preview_market_order", order)
        return await client.call_tool("place_market_order", {
            **order, "preview_id": quote.structured_content["preview_id"],
            "idempotency_key": str(uuid.uuid4())})

    done = run_client(mcp_url, token, "auto", body, elicitation=accepting(asked),
                      extensions=[tasks])
    # The person confirmed first; the task answer came back while the order was delayed
    # (before it was final), then followed the order to its end.
    assert len(asked) == 1
    assert tasks.seen == [("working", "delayed"), ("working", "matched"),
                          ("completed", "confirmed")]
    assert not done.is_error, done.structured_content
    assert Order.get(Order.order_hash == done.structured_content["order_id"]).status == "matched"
    assert len(orders_for(venue_control, trader.maker)) == 1


def test_a_resting_order_task_on_2026_is_cancelled_and_lists_are_not_in_the_extension(
        mcp_url, trader_key, market, venue_control):
    token = trader_key("trade:execute", "trade:cancel")
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "limit",
             "price": "0.05"}

    async def body(client: Client):
        quote = await client.call_tool("preview_market_order", order)
        created = await client.session.call_tool("place_market_order", {
            **order, "preview_id": quote.structured_content["preview_id"],
            "idempotency_key": str(uuid.uuid4())}, allow_claimed=True)
        assert isinstance(created, CreatedTask), created
        resting = await task_get(client.session, created.task_id)
        cancel = CancelTaskRequest(params=CancelTaskRequestParams(task_id=created.task_id))
        acknowledged = await client.session.send_request(cancel, ANY)
        after = await task_get(client.session, created.task_id)
        try:
            await client.session.send_request(cancel, ANY)
        except MCPError as err:
            again = err.error.message
        return created, resting, acknowledged, after, again

    created, resting, acknowledged, after, again = run_client(
        mcp_url, token, "auto", body, extensions=[FollowTasks()])
    assert (created.status, created.status_message) == ("working", "resting on the book")
    assert created.poll_interval_ms and "result" not in resting
    assert resting["status"] == "working"
    assert acknowledged.get("resultType") == "complete"
    assert after["status"] == "cancelled" and "result" not in after
    assert "only an order still open can be cancelled" in again
    from models.agents import AgentTask

    order_hash = AgentTask.get_by_id(created.task_id).order_hash
    assert Order.get(Order.order_hash == order_hash).status == "cancelled"
    # The extension defines no tasks/list: an unknown method on this wire.
    listed = modern_call(mcp_url, token, "tasks/list", {})
    assert listed.status_code == 404 and listed.json()["error"]["code"] == -32601
