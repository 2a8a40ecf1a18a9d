"""Money-moving tools wait for a person (issue 47): a code on every client, a form on
2026-07-28 clients that declared elicitation; declined, expired, reused or changed-argument
confirmations are refused and nothing reaches the venue."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import ElicitResult

from models.agents import AgentConfirmation
from models.base import utcnow
from models.trading import Order, OrderPreview
from services.identity import agent_confirmations
from services.trading import previews
from tests.mcp_server.conftest import decode, modern_call, modern_meta, run_client
from tests.mcp_server.test_write_tools import orders_for

MODES = ["legacy", "auto"]


def key() -> str:
    return str(uuid.uuid4())


def order_of(market: Any, size: str = "10") -> dict[str, Any]:
    return {"token_id": market.yes, "side": "buy", "size": size, "order_type": "market"}


async def placing(client: Client, order: dict[str, Any]) -> dict[str, Any]:
    """The place_market_order arguments for a fresh preview of ``order``."""
    quote = await client.call_tool("preview_market_order", order)
    return {**order, "preview_id": quote.structured_content["preview_id"],
            "idempotency_key": key()}


def refused(result: Any, words: str) -> None:
    """An isError result with the closed code naming confirmation_code, saying ``words``."""
    assert result.is_error, result.structured_content
    body = result.structured_content
    assert body["code"] == "validation_failed"
    assert "confirmation_code" in body["fields"]
    assert words in body["error"], body["error"]
    assert "Nothing was sent" in body["error"]


def confirmation_line(preview_id: str) -> str:
    return previews.summary_of(OrderPreview.get_by_id(preview_id))["confirmation"]


@pytest.mark.parametrize("mode", MODES)
def test_an_order_waits_for_the_persons_code_then_runs_once(mode, mcp_url, trader_key, trader,
                                                            market, venue_control):
    token = trader_key("trade:execute", confirm=True)

    async def body(client: Client):
        args = await placing(client, order_of(market))
        asked = await client.call_tool("place_market_order", args)
        sent_while_asking = len(orders_for(venue_control, trader.maker))
        code = asked.structured_content["confirmation"]["code"]
        done = await client.call_tool("place_market_order", {**args, "confirmation_code": code})
        reused = await client.call_tool("place_market_order", {
            **args, "confirmation_code": code, "idempotency_key": key()})
        return args, asked, sent_while_asking, done, reused

    args, asked, sent_while_asking, done, reused = run_client(mcp_url, token, mode, body)
    assert asked.is_error and asked.structured_content["code"] == "validation_failed"
    shown = asked.structured_content["confirmation"]
    # The person sees the preview's own words and numbers.
    assert shown["summary"] == confirmation_line(args["preview_id"])
    assert "pUSD" in shown["summary"]
    assert sent_while_asking == 0
    assert not done.is_error, done.structured_content
    assert done.structured_content["status"] == "filled"
    refused(reused, "already used")
    assert len(orders_for(venue_control, trader.maker)) == 1
    assert Order.select().where(Order.user == trader.user.id).count() == 1
    row = AgentConfirmation.get_by_id(shown["id"])
    assert row.status == "used" and row.tool == "place_market_order"


@pytest.mark.parametrize("mode", MODES)
def test_a_code_for_other_arguments_or_expired_or_declined_sends_nothing(
        mode, mcp_url, trader_key, trader, market, venue_control):
    token = trader_key("trade:execute", confirm=True)

    async def ask(client: Client, size: str) -> tuple[dict[str, Any], dict[str, Any]]:
        args = await placing(client, order_of(market, size))
        asked = await client.call_tool("place_market_order", args)
        return args, asked.structured_content["confirmation"]

    async def body(client: Client):
        ten, ten_asked = await ask(client, "10")
        eleven = await placing(client, order_of(market, "11"))
        changed = await client.call_tool("place_market_order",
                                         {**eleven, "confirmation_code": ten_asked["code"]})
        twelve, twelve_asked = await ask(client, "12")
        AgentConfirmation.update(expires_at=utcnow() - timedelta(seconds=1)).where(
            AgentConfirmation.id == twelve_asked["id"]).execute()
        expired = await client.call_tool("place_market_order",
                                         {**twelve, "confirmation_code": twelve_asked["code"]})
        thirteen, thirteen_asked = await ask(client, "13")
        agent_confirmations.decide(trader.user, uuid.UUID(thirteen_asked["id"]),
                                   approve=False, by="dashboard")
        declined = await client.call_tool(
            "place_market_order", {**thirteen, "confirmation_code": thirteen_asked["code"]})
        unknown = await client.call_tool("place_market_order",
                                         {**ten, "confirmation_code": "ABCD-EFGH"})
        return changed, expired, declined, unknown

    changed, expired, declined, unknown = run_client(mcp_url, token, mode, body)
    refused(changed, "different call")
    refused(expired, "expired")
    refused(declined, "declined")
    refused(unknown, "Unknown confirmation_code")
    assert orders_for(venue_control, trader.maker) == []


def accepting(seen: list[Any], *, action: str = "accept", before: Any = None) -> Any:
    """An elicitation callback answering ``action``, recording what it was shown."""

    async def answer(context: Any, params: Any) -> ElicitResult:
        seen.append(params)
        if before is not None:
            before()
        content = {"confirm": True} if action == "accept" else None
        return ElicitResult(action=action, content=content)

    return answer


def test_a_form_client_confirms_in_the_form_and_the_order_runs(mcp_url, trader_key, trader,
                                                               market, venue_control):
    token = trader_key("trade:execute", confirm=True)
    seen: list[Any] = []

    async def body(client: Client):
        args = await placing(client, order_of(market))
        return args, await client.call_tool("place_market_order", args)

    args, done = run_client(mcp_url, token, "auto", body, elicitation=accepting(seen))
    assert not done.is_error, done.structured_content
    assert done.structured_content["status"] == "filled"
    assert len(seen) == 1 and seen[0].mode == "form"
    assert seen[0].message == confirmation_line(args["preview_id"])
    assert seen[0].requested_schema["properties"]["confirm"]["type"] == "boolean"
    assert len(orders_for(venue_control, trader.maker)) == 1
    row = AgentConfirmation.get(AgentConfirmation.user_id == trader.user.id)
    assert (row.channel, row.status) == ("form", "used")


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_form_is_a_tool_error_and_nothing_is_sent(action, mcp_url, trader_key,
                                                              trader, market, venue_control):
    token = trader_key("trade:execute", confirm=True)

    async def body(client: Client):
        return await client.call_tool("place_market_order",
                                      await placing(client, order_of(market)))

    result = run_client(mcp_url, token, "auto", body,
                        elicitation=accepting([], action=action))
    refused(result, "declined")
    assert orders_for(venue_control, trader.maker) == []
    assert AgentConfirmation.get(AgentConfirmation.user_id == trader.user.id).status == "declined"


def test_a_form_answered_after_it_expired_sends_nothing(mcp_url, trader_key, trader, market,
                                                        venue_control):
    token = trader_key("trade:execute", confirm=True)

    def expire() -> None:  # the person answers after the 15 minutes
        AgentConfirmation.update(expires_at=utcnow() - timedelta(seconds=1)).execute()

    async def body(client: Client):
        return await client.call_tool("place_market_order",
                                      await placing(client, order_of(market)))

    result = run_client(mcp_url, token, "auto", body,
                        elicitation=accepting([], before=expire))
    refused(result, "expired")
    assert orders_for(venue_control, trader.maker) == []


def test_a_request_state_is_bound_to_its_credential_and_arguments(mcp_url, trader_key, trader,
                                                                  market, venue_control):
    token, other = (trader_key("trade:execute", confirm=True) for _ in range(2))
    args = run_client(mcp_url, token, "auto", lambda client: placing(client, order_of(market)))
    meta = modern_meta()
    meta["io.modelcontextprotocol/clientCapabilities"] = {"elicitation": {"form": {}}}
    first = decode(modern_call(mcp_url, token, "tools/call",
                               {"name": "place_market_order", "arguments": args}, meta=meta))
    assert first["result"]["resultType"] == "input_required"
    request = first["result"]["inputRequests"]["confirm"]
    assert request["method"] == "elicitation/create"
    state = first["result"]["requestState"]
    yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}

    def retry(secret: str, arguments: dict[str, Any], request_state: str) -> dict[str, Any]:
        return decode(modern_call(mcp_url, secret, "tools/call", {
            "name": "place_market_order", "arguments": arguments, "inputResponses": yes,
            "requestState": request_state}, meta=meta))["result"]

    body, mac = state.split(".")
    forged = retry(token, args, f"{body}.{'0' * len(mac)}")
    stolen = retry(other, args, state)
    changed = retry(token, {**args, "size": "11"}, state)
    for result in (forged, stolen):
        assert result["isError"] and "not one this server gave" in result["structuredContent"][
            "error"]
    assert changed["isError"] and "different call" in changed["structuredContent"]["error"]
    assert orders_for(venue_control, trader.maker) == []
    done = retry(token, args, state)
    assert not done["isError"] and done["structuredContent"]["status"] == "filled"
    again = retry(token, {**args, "idempotency_key": key()}, state)
    assert again["isError"] and "already used" in again["structuredContent"]["error"]
    assert len(orders_for(venue_control, trader.maker)) == 1


def test_a_legacy_session_with_elicitation_is_asked_on_the_calls_stream(
        mcp_url, trader_key, market, venue_control, trader):
    # 2025-11-25: the call's answer is an SSE stream carrying elicitation/create; the
    # client's answer comes back on its session and the call then runs once.
    token = trader_key("trade:execute", confirm=True)
    seen: list[Any] = []
    sent_while_asking: list[int] = []

    async def body(client: Client):
        args = await placing(client, order_of(market))
        return args, await client.call_tool("place_market_order", args)

    def count() -> None:
        sent_while_asking.append(len(orders_for(venue_control, trader.maker)))

    args, done = run_client(mcp_url, token, "legacy", body,
                            elicitation=accepting(seen, before=count))
    assert not done.is_error, done.structured_content
    assert done.structured_content["status"] == "filled"
    assert len(seen) == 1 and seen[0].message == confirmation_line(args["preview_id"])
    assert seen[0].requested_schema["properties"]["confirm"]["type"] == "boolean"
    assert sent_while_asking == [0]
    assert len(orders_for(venue_control, trader.maker)) == 1
    row = AgentConfirmation.get(AgentConfirmation.user_id == trader.user.id)
    assert (row.channel, row.status, row.decided_by) == ("form", "used", "agent")


def test_a_legacy_session_is_answered_without_redis_by_reading_the_row(
        monkeypatch, mcp_url, trader_key, trader, market, venue_control):
    # Redis only wakes the waiting stream; with it down the answer still counts, read from
    # the database within a second.
    import redis

    from services.identity import confirmation_answers

    class Down:
        @staticmethod
        def connection() -> Any:
            raise redis.ConnectionError("injected: Redis is down")

    monkeypatch.setattr(confirmation_answers, "jobs", Down)
    token = trader_key("trade:execute", confirm=True)

    async def body(client: Client):
        return await client.call_tool("place_market_order",
                                      await placing(client, order_of(market)))

    done = run_client(mcp_url, token, "legacy", body, elicitation=accepting([]))
    assert not done.is_error, done.structured_content
    assert done.structured_content["status"] == "filled"
    assert len(orders_for(venue_control, trader.maker)) == 1


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_legacy_session_declining_sends_nothing(action, mcp_url, trader_key, trader, market,
                                                  venue_control):
    token = trader_key("trade:execute", confirm=True)

    async def body(client: Client):
        return await client.call_tool("place_market_order",
                                      await placing(client, order_of(market)))

    result = run_client(mcp_url, token, "legacy", body,
                        elicitation=accepting([], action=action))
    refused(result, "declined")
    assert orders_for(venue_control, trader.maker) == []
    assert Order.select().where(Order.user == trader.user.id).count() == 0
    assert AgentConfirmation.get(AgentConfirmation.user_id == trader.user.id).status == "declined"


def test_a_legacy_session_left_unanswered_expires_and_sends_nothing(
        mcp_url, trader_key, trader, market, venue_control):
    token = trader_key("trade:execute", confirm=True)
    answered_late: list[Any] = []

    async def never_in_time(context: Any, params: Any) -> ElicitResult:
        # The person walks away: the confirmation runs out two seconds from now and the
        # answer comes only after the call has ended.
        AgentConfirmation.update(expires_at=utcnow() + timedelta(seconds=2)).execute()
        await anyio.sleep(6)
        answered_late.append(True)
        return ElicitResult(action="accept", content={"confirm": True})

    async def body(client: Client):
        return await client.call_tool("place_market_order",
                                      await placing(client, order_of(market)))

    result = run_client(mcp_url, token, "legacy", body, elicitation=never_in_time)
    refused(result, "expired")
    assert answered_late == []  # the call ended while the form was still open
    assert orders_for(venue_control, trader.maker) == []
    assert AgentConfirmation.get(AgentConfirmation.user_id == trader.user.id).status == "pending"


def test_a_legacy_session_gets_the_code_while_its_user_holds_every_stream_slot(
        mcp_url, trader_key, trader, market, venue_control):
    # A waiting call holds a web thread: past the per-user cap of long streams (listen.py)
    # the session is asked the other way, with a code, rather than refused.
    from blueprints.mcp import listen

    token = trader_key("trade:execute", confirm=True)
    seen: list[Any] = []
    assert listen.take_slot(trader.user.id) is None  # the user's one slot (the default)

    async def body(client: Client):
        return await client.call_tool("place_market_order",
                                      await placing(client, order_of(market)))

    try:
        result = run_client(mcp_url, token, "legacy", body, elicitation=accepting(seen))
    finally:
        listen.give_slot(trader.user.id)
    assert seen == []
    refused(result, "A person must confirm")
    assert result.structured_content["confirmation"]["code"]
    assert orders_for(venue_control, trader.maker) == []
    assert listen.take_slot(trader.user.id) is None  # the call gave back what it took
    listen.give_slot(trader.user.id)


@pytest.mark.parametrize("mode", MODES)
def test_an_unattended_agent_runs_once_a_person_approves(mode, mcp_url, trader_key, trader,
                                                         market, venue_control):
    token = trader_key("trade:execute", confirm=True)

    async def body(client: Client):
        args = await placing(client, order_of(market))
        asked = await client.call_tool("place_market_order", args)
        waiting = await client.call_tool("place_market_order", args)  # no code: still waits
        agent_confirmations.decide(trader.user, uuid.UUID(
            asked.structured_content["confirmation"]["id"]), approve=True, by="dashboard")
        done = await client.call_tool("place_market_order", args)  # the same call, no code
        return asked, waiting, done

    asked, waiting, done = run_client(mcp_url, token, mode, body)
    refused(waiting, "still waits for a person")
    assert "code" not in waiting.structured_content["confirmation"]
    assert (waiting.structured_content["confirmation"]["id"]
            == asked.structured_content["confirmation"]["id"])
    assert done.structured_content["status"] == "filled", done.structured_content
    assert len(orders_for(venue_control, trader.maker)) == 1


def test_paper_configs_and_lowered_limits_need_no_confirmation(mcp_url, trader_key, trader):
    from services.copying import configs

    token = trader_key("trade:execute", confirm=True)
    target = "0x" + "ab" * 20

    async def body(client: Client):
        preview = await client.call_tool("preview_copy_config", {
            "target_address": target, "size_multiplier": "1", "max_position_usdc": "50",
            "paper_trading": True})
        created = await client.call_tool("create_copy_config", {
            "target_address": target, "preview_id": preview.structured_content["preview_id"],
            "idempotency_key": key()})
        config_id = created.structured_content["id"]
        started = await client.call_tool("start_copying", {"config_id": config_id,
                                                           "idempotency_key": key()})
        await client.call_tool("stop_copying", {"config_id": config_id,
                                                "idempotency_key": key()})
        live = await client.call_tool("update_copy_config", {
            "config_id": config_id, "paper_trading": False, "idempotency_key": key()})
        return created, started, live, config_id

    created, started, live, config_id = run_client(mcp_url, token, "auto", body)
    assert not created.is_error and not started.is_error, (created, started)
    refused(live, "A person must confirm")
    assert "from paper to real funds" in live.structured_content["confirmation"]["summary"]
    assert configs.get(trader.user, config_id).paper_trading is True
