"""Write tools over the SDK client: idempotency keys, previews, exactly-once orders, scopes."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from eth_account import Account
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.shared.exceptions import MCPError

from models.base import utcnow
from models.copying import ConfigPreview
from models.idempotency import IdempotencyRecord
from models.trading import Order, OrderPreview
from schemas.vocabulary import SCOPES
from services.wallets import wallets
from tests.mcp_server.conftest import rpc, run_client, set_confirmations
from tests.mcp_server.test_sdk_client import WRITE_TOOLS

REQUIRES_KEY = sorted(name for name in WRITE_TOOLS if not name.startswith("preview_"))


def key() -> str:
    return str(uuid.uuid4())


def validate(tool: Any, result: Any) -> None:
    """The result is a success whose structured content matches the tool's outputSchema."""
    assert not result.is_error, result.structured_content
    errors = list(Draft202012Validator(tool.output_schema).iter_errors(
        result.structured_content))
    assert not errors, [e.message for e in errors]


def replayed(result: Any) -> bool:
    """True when the result is the saved answer of an earlier call with the same key."""
    return bool((result.meta or {}).get("com.copytrade/idempotentReplay"))


def orders_for(venue_control: Any, maker: str) -> list[dict]:
    """The POST /order envelopes the sandbox received from ``maker``."""
    received = venue_control.received_orders()
    return [o for o in received if maker.lower() in str(o).lower()]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_every_write_tool_requires_an_idempotency_key(mode, mcp_url, trader_key):
    token = trader_key(*SCOPES)

    async def body(client: Client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        return listed, {name: await client.call_tool(name, {}) for name in REQUIRES_KEY}

    listed, results = run_client(mcp_url, token, mode, body)
    for name in REQUIRES_KEY:
        assert "idempotency_key" in listed[name].input_schema["required"], name
        assert listed[name].annotations.read_only_hint is False
        result = results[name]
        assert result.is_error, name
        assert result.structured_content["code"] == "validation_failed"
        assert "idempotency_key" in result.structured_content["fields"], name
    for name in ("preview_market_order", "preview_copy_config"):
        assert "idempotency_key" in listed[name].input_schema["properties"]
        assert "idempotency_key" not in listed[name].input_schema.get("required", [])


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_preview_then_place_reaches_the_venue_once_for_one_key(mode, mcp_url, trader_key,
                                                               trader, market,
                                                               venue_control):
    token = trader_key("trade:execute", "read:trades")
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    same_key = key()

    async def body(client: Client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        quote = await client.call_tool("preview_market_order", order)
        validate(listed["preview_market_order"], quote)
        placing = {**order, "preview_id": quote.structured_content["preview_id"],
                   "idempotency_key": same_key}
        first = await client.call_tool("place_market_order", placing)
        again = await client.call_tool("place_market_order", placing)
        reused = await client.call_tool("place_market_order", {**placing,
                                                               "idempotency_key": key()})
        return listed, first, again, reused

    listed, first, again, reused = run_client(mcp_url, token, mode, body)
    validate(listed["place_market_order"], first)
    assert first.structured_content["status"] == "filled"
    assert Decimal(first.structured_content["filled_size"]) == Decimal(10)
    assert again.structured_content == first.structured_content
    assert replayed(again) and not replayed(first)
    # A new key cannot spend the same (single-use) preview again.
    assert reused.is_error and reused.structured_content["code"] == "bad_request"
    assert "already used" in reused.structured_content["error"]
    sent = orders_for(venue_control, trader.maker)
    assert len(sent) == 1
    assert Order.select().where(Order.user == trader.user.id).count() == 1


def test_a_market_buy_sized_by_amount(mcp_url, trader_key, trader, market, venue_control):
    token = trader_key("trade:execute")
    order = {"token_id": market.yes, "side": "buy", "amount": "5", "order_type": "market"}

    async def body(client: Client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        quote = await client.call_tool("preview_market_order", order)
        validate(listed["preview_market_order"], quote)
        placed = await client.call_tool(
            "place_market_order", {**order, "idempotency_key": key(),
                                   "preview_id": quote.structured_content["preview_id"]})
        selling = await client.call_tool("preview_market_order", {**order, "side": "sell"})
        both = await client.call_tool("preview_market_order", {**order, "size": "10"})
        return quote.structured_content, placed, selling, both

    quote, placed, selling, both = run_client(mcp_url, token, "auto", body)
    assert quote["amount"] == "5" and Decimal(quote["estimated_cost"]) <= Decimal(5)
    assert "spending at most 5.00 pUSD" in quote["confirmation"]
    assert not placed.is_error, placed.structured_content
    assert placed.structured_content["status"] == "filled"
    assert placed.structured_content["filled_size"] == quote["estimated_shares"]
    for refused in (selling, both):
        assert refused.is_error and refused.structured_content["code"] == "validation_failed"
        assert "amount" in refused.structured_content["fields"]
    [sent] = orders_for(venue_control, trader.maker)
    assert sent["body"]["order"]["makerAmount"] == str(int(Decimal(quote["estimated_cost"])
                                                           * 10**6))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_place_needs_an_unexpired_preview(mode, mcp_url, trader_key, trader, market,
                                          venue_control):
    token = trader_key("trade:execute")
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}

    async def quote(client: Client) -> str:
        return (await client.call_tool("preview_market_order", order)
                ).structured_content["preview_id"]

    stale = run_client(mcp_url, token, mode, quote)
    OrderPreview.update(expires_at=utcnow() - timedelta(seconds=1)).where(
        OrderPreview.id == stale).execute()

    async def body(client: Client):
        return (await client.call_tool("place_market_order",
                                       {**order, "idempotency_key": key()}),
                await client.call_tool("place_market_order",
                                       {**order, "preview_id": str(uuid.uuid4()),
                                        "idempotency_key": key()}),
                await client.call_tool("place_market_order",
                                       {**order, "preview_id": stale,
                                        "idempotency_key": key()}))

    missing, unknown, expired = run_client(mcp_url, token, mode, body)
    assert missing.is_error and "preview_id" in missing.structured_content["fields"]
    assert unknown.is_error and unknown.structured_content["code"] == "bad_request"
    assert "Unknown preview_id" in unknown.structured_content["error"]
    assert expired.is_error and "expired" in expired.structured_content["error"]
    assert orders_for(venue_control, trader.maker) == []


def test_the_write_is_refused_when_the_idempotency_store_is_down(mcp_url, trader_key, trader,
                                                                 market, venue_control,
                                                                 bound_db):
    token = trader_key("trade:execute")
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}

    async def quote(client: Client) -> str:
        return (await client.call_tool("preview_market_order", order)
                ).structured_content["preview_id"]

    preview_id = run_client(mcp_url, token, "auto", quote)
    table = IdempotencyRecord._meta.table_name
    bound_db.execute_sql(f'ALTER TABLE "{table}" RENAME TO "{table}_away"')
    try:
        async def place(client: Client):
            return await client.call_tool("place_market_order", {
                **order, "preview_id": preview_id, "idempotency_key": key()})

        refused = run_client(mcp_url, token, "auto", place)
    finally:
        bound_db.execute_sql(f'ALTER TABLE "{table}_away" RENAME TO "{table}"')
    assert refused.is_error and refused.structured_content["code"] == "cache_error"
    assert refused.structured_content["retry_after"] > 0
    assert orders_for(venue_control, trader.maker) == []
    assert OrderPreview.get_by_id(preview_id).used_at is None  # still redeemable


@pytest.fixture
def whale(venue_control, market) -> str:
    """A target wallet with fills on the test market."""
    address = Account.create().address.lower()
    for side, size in (("BUY", "100"), ("SELL", "40")):
        venue_control.call("POST", "/trades", {"wallet": address, "token_id": market.yes,
                                               "side": side, "size": size, "price": "0.5"},
                           expect=201)
    return address


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_copy_config_lifecycle(mode, mcp_url, trader_key, whale):
    token = trader_key("trade:execute", "read:account")
    settings = {"target_address": whale, "target_name": "whale", "size_multiplier": "0.5",
                "max_position_usdc": "100", "paper_trading": True}
    start_key = key()

    async def body(client: Client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        shown = await client.call_tool("preview_copy_config", settings)
        validate(listed["preview_copy_config"], shown)
        preview_id = shown.structured_content["preview_id"]
        no_preview = await client.call_tool("create_copy_config", {"idempotency_key": key()})
        created = await client.call_tool("create_copy_config", {
            "preview_id": preview_id, "idempotency_key": key()})
        validate(listed["create_copy_config"], created)
        config_id = created.structured_content["id"]
        started = await client.call_tool("start_copying", {
            "config_id": config_id, "idempotency_key": start_key})
        replayed_start = await client.call_tool("start_copying", {
            "config_id": config_id, "idempotency_key": start_key})
        stopped = await client.call_tool("stop_copying", {
            "config_id": config_id, "idempotency_key": key()})
        deleted = await client.call_tool("delete_copy_config", {
            "config_id": config_id, "idempotency_key": key()})
        gone = await client.call_tool("get_copy_config", {"config_id": config_id})
        return (listed, no_preview, created, started, replayed_start, stopped, deleted, gone,
                preview_id)

    (listed, no_preview, created, started, replayed_start, stopped, deleted, gone,
     preview_id) = run_client(mcp_url, token, mode, body)
    assert no_preview.is_error and "preview_id" in no_preview.structured_content["fields"]
    assert created.structured_content["is_active"] is False
    assert created.structured_content["paper_trading"] is True
    validate(listed["start_copying"], started)
    assert started.structured_content["is_active"] is True
    assert replayed_start.structured_content == started.structured_content
    assert replayed(replayed_start)
    validate(listed["stop_copying"], stopped)
    assert stopped.structured_content["is_active"] is False
    validate(listed["delete_copy_config"], deleted)
    assert deleted.structured_content == {"deleted": True, "config_id": created
                                          .structured_content["id"]}
    assert gone.is_error and gone.structured_content["code"] == "not_found"
    assert ConfigPreview.get_by_id(preview_id).consumed_at is not None


def test_create_copy_config_refuses_an_expired_preview(mcp_url, trader_key, whale):
    token = trader_key("trade:execute")

    async def shown(client: Client) -> str:
        return (await client.call_tool("preview_copy_config", {
            "target_address": whale, "size_multiplier": "1", "max_position_usdc": "10"})
        ).structured_content["preview_id"]

    preview_id = run_client(mcp_url, token, "auto", shown)
    ConfigPreview.update(expires_at=utcnow() - timedelta(seconds=1)).where(
        ConfigPreview.id == preview_id).execute()

    async def create(client: Client):
        return await client.call_tool("create_copy_config", {
            "preview_id": preview_id, "idempotency_key": key()})

    expired = run_client(mcp_url, token, "auto", create)
    assert expired.is_error and expired.structured_content["code"] == "validation_failed"
    assert expired.structured_content["fields"] == {"preview_id": ["Expired."]}


def test_cancel_a_resting_order(mcp_url, trader_key, market):
    token = trader_key("trade:execute", "trade:cancel", "read:markets")
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "limit",
             "price": "0.30"}

    async def body(client: Client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        quote = await client.call_tool("preview_market_order", order)
        placed = await client.call_tool("place_market_order", {
            **order, "preview_id": quote.structured_content["preview_id"],
            "idempotency_key": key()})
        order_id = placed.structured_content["order_id"]
        resting = await client.call_tool("list_open_orders", {})
        cancelled = await client.call_tool("cancel_order", {
            "order_id": order_id, "idempotency_key": key()})
        after = await client.call_tool("list_open_orders", {})
        return listed, placed, resting, cancelled, after

    listed, placed, resting, cancelled, after = run_client(mcp_url, token, "auto", body)
    assert placed.structured_content["status"] == "accepted"
    order_id = placed.structured_content["order_id"]
    assert [o["order_id"] for o in resting.structured_content["orders"]] == [order_id]
    validate(listed["cancel_order"], cancelled)
    assert cancelled.structured_content == {"canceled": [order_id], "not_canceled": {}}
    assert after.structured_content == {"orders": []}
    annotations = listed["cancel_order"].annotations
    assert annotations.destructive_hint is True and annotations.idempotent_hint is True


def test_claim_positions_with_nothing_to_claim(mcp_url, api_key, user, wallet_chain):
    wallets.get_or_create(user)
    token = api_key("wallet:write", owner=user)
    set_confirmations(user, token, on=False)  # confirmations: test_confirmations.py
    claim_key = key()

    async def body(client: Client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        first = await client.call_tool("claim_positions", {"idempotency_key": claim_key})
        again = await client.call_tool("claim_positions", {"idempotency_key": claim_key})
        bad = await client.call_tool("claim_positions", {"token_ids": ["0xab"],
                                                         "idempotency_key": key()})
        return listed, first, again, bad

    listed, first, again, bad = run_client(mcp_url, token, "auto", body)
    assert {t for t in listed} == {"get_platform_stats", "claim_positions"}
    validate(listed["claim_positions"], first)
    assert first.structured_content["claims"] == []
    assert "Nothing to claim" in first.structured_content["message"]
    assert replayed(again) and again.structured_content == first.structured_content
    assert bad.is_error and bad.structured_content["code"] == "validation_failed"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_tool_beyond_the_scopes_is_refused_with_a_step_up_challenge(mode, mcp_url,
                                                                      trader_key, market):
    token = trader_key("read:markets")

    async def body(client: Client):
        with pytest.raises(MCPError) as refused:
            await client.call_tool("preview_market_order", {
                "token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"})
        return refused.value

    refused = run_client(mcp_url, token, mode, body)
    assert refused.code == -31403
    assert refused.data["code"] == "scope_required"
    assert refused.data["required_scope"] == "trade:execute"

    raw = rpc(mcp_url, {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                        "params": {"name": "cancel_order", "arguments": {}}},
              token, version="2025-11-25")
    assert raw.status_code == 403
    challenge = raw.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ") and 'error="insufficient_scope"' in challenge
    assert 'scope="trade:cancel"' in challenge and "resource_metadata=" in challenge
    assert raw.json()["id"] == 7 and raw.json()["error"]["code"] == -31403


def test_a_session_jwt_is_refused(mcp_url, session_token, live_server):
    async def body(client: Client):
        return await client.list_tools()

    with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces the 401 its own way
        run_client(mcp_url, session_token, "auto", body)
    raw = rpc(mcp_url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session_token,
              version="2025-11-25")
    assert raw.status_code == 401 and raw.json()["code"] == "invalid_token"
    assert raw.headers["WWW-Authenticate"] == (
        'Bearer resource_metadata="http://127.0.0.1:8000/.well-known/'
        'oauth-protected-resource", error="invalid_token"')
    anonymous = rpc(mcp_url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert anonymous.status_code == 401
    assert anonymous.headers["WWW-Authenticate"] == (
        'Bearer resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource"')


def test_parallel_duplicate_places_reach_the_venue_once(mcp_url, trader_key, trader, market,
                                                        venue_control):
    token = trader_key("trade:execute")
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    quote = rpc(mcp_url, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "preview_market_order", "arguments": order}}, token, version="2025-11-25")
    preview_id = quote.json()["result"]["structuredContent"]["preview_id"]
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "place_market_order",
        "arguments": {**order, "preview_id": preview_id, "idempotency_key": key()}}}
    results: list[dict] = []
    barrier = threading.Barrier(6)

    def send() -> None:
        barrier.wait()
        results.append(rpc(mcp_url, call, token, version="2025-11-25").json()["result"])

    threads = [threading.Thread(target=send) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    placed = [r for r in results if not r["isError"]]
    assert placed and {r["structuredContent"]["order_id"] for r in placed} == {
        placed[0]["structuredContent"]["order_id"]}
    # The rest saw the first still running (409 in REST): retry later, nothing sent.
    assert all(r["structuredContent"]["code"] == "bad_request" for r in results
               if r["isError"])
    assert len(orders_for(venue_control, trader.maker)) == 1


def test_place_order_in_cancel_only_mode_is_unavailable_and_the_same_key_places_once(
        mcp_url, trader_key, market, venue_control, trader):
    token = trader_key("trade:execute", "read:markets")
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    same = key()

    async def body(client: Client):
        quote = await client.call_tool("preview_market_order", order)
        args = {**order, "preview_id": quote.structured_content["preview_id"],
                "idempotency_key": same}
        venue_control.call("POST", "/mode", {"mode": "cancel_only", "retry_after": 6},
                           expect=200)
        try:
            refused = await client.call_tool("place_market_order", args)
        finally:
            venue_control.call("POST", "/mode", {"mode": "open"}, expect=200)
        placed = await client.call_tool("place_market_order", args)
        return refused, placed

    refused, placed = run_client(mcp_url, token, "auto", body)
    assert refused.is_error
    error = refused.structured_content
    assert (error["code"], error["reason"], error["retry_after"]) == (
        "polymarket_unavailable", "venue_cancel_only", 6)
    assert not placed.is_error and placed.structured_content["status"] == "filled"
    accepted = [o for o in orders_for(venue_control, trader.maker)
                if (o.get("response") or {}).get("success")]
    assert [o["order_id"] for o in accepted] == [placed.structured_content["order_id"]]


def test_copy_rules_through_preview_create_update_and_status(mcp_url, trader_key, whale):
    token = trader_key("trade:execute", "read:account")
    rules = {"target_address": whale, "max_position_usdc": "100", "paper_trading": True,
             "sizing_mode": "fixed_usdc", "fixed_usdc": "5", "min_trade_usdc": "2",
             "max_trade_usdc": "20", "round_up_to_min": True, "min_price": "0.1",
             "max_price": "0.9", "direction": "inverse", "daily_budget_usdc": "50",
             "loss_stop_usdc": "25", "close_positions_on_stop": True,
             "max_consecutive_failures": 3, "start_mode": "copy_open_positions",
             "skip_if_ends_within_hours": "6", "exclude_keywords": ["Fed"],
             "entry_policy": "first_entry_only", "sell_mode": "sell_all",
             "max_open_positions": 3, "market_cooldown_seconds": 30,
             "price_deviation_bands": [{"max_price": "0.5", "max_deviation_bps": 450},
                                       {"max_price": "1", "max_deviation_bps": 250}]}

    async def body(client: Client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        bad = await client.call_tool("preview_copy_config", {**rules, "min_price": "0.95"})
        shown = await client.call_tool("preview_copy_config", rules)
        created = await client.call_tool("create_copy_config", {
            "preview_id": shown.structured_content["preview_id"], "idempotency_key": key()})
        config_id = created.structured_content["id"]
        updated = await client.call_tool("update_copy_config", {
            "config_id": config_id, "sizing_mode": "multiplier", "fixed_usdc": None,
            "size_multiplier": "0.5", "copy_sells": False, "entry_policy": "max_adds",
            "max_adds_count": 2, "idempotency_key": key()})
        contradicting = await client.call_tool("update_copy_config", {
            "config_id": config_id, "fixed_usdc": "9", "idempotency_key": key()})
        return listed, bad, shown, created, updated, contradicting

    listed, bad, shown, created, updated, contradicting = run_client(
        mcp_url, token, "auto", body)
    assert bad.is_error and bad.structured_content["code"] == "validation_failed"
    assert "min_price" in bad.structured_content["fields"]
    validate(listed["preview_copy_config"], shown)
    assert shown.structured_content["sizing"]["sizing_mode"] == "fixed_usdc"
    assert shown.structured_content["guards"]["direction"] == "inverse"
    validate(listed["create_copy_config"], created)
    config = created.structured_content
    assert (config["fixed_usdc"], config["direction"], config["exclude_keywords"]) == (
        "5", "inverse", ["fed"])
    validate(listed["update_copy_config"], updated)
    assert updated.structured_content["sizing_mode"] == "multiplier"
    assert updated.structured_content["fixed_usdc"] is None
    assert updated.structured_content["copy_sells"] is False
    assert (config["entry_policy"], config["sell_mode"], config["max_open_positions"],
            config["market_cooldown_seconds"]) == ("first_entry_only", "sell_all", 3, 30)
    assert config["price_deviation_bands"][1] == {"max_price": "1", "max_deviation_bps": 250}
    assert (updated.structured_content["entry_policy"],
            updated.structured_content["max_adds_count"]) == ("max_adds", 2)
    assert contradicting.is_error and "fixed_usdc" in contradicting.structured_content["fields"]
