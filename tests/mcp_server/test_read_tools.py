"""Every read tool, called with the SDK client on the sandbox venue, returns schema-valid data."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from eth_account import Account
from jsonschema import Draft202012Validator
from mcp import Client

from schemas.vocabulary import SCOPES
from services.copying import configs
from services.copying.configs import sharing
from services.trading import orders, paper, previews
from tests.mcp_server.conftest import run_client
from tests.mcp_server.test_sdk_client import READ_TOOLS


@dataclass
class Scenario:
    """An account with something in every list: trades, a position, an order, a config."""

    market: Any
    whale: str
    config_id: str
    resting_order_id: str
    shared_token: str


@pytest.fixture
def scenario(trader, market, venue_control, fresh_venue_cache) -> Scenario:
    whale = Account.create().address.lower()
    # Big enough to rank among the top traders of a sandbox other tests share.
    for side, size, price in (("BUY", "40000", "0.52"), ("SELL", "10000", "0.55")):
        venue_control.call("POST", "/trades", {"wallet": whale, "token_id": market.yes,
                                               "side": side, "size": size, "price": price},
                           expect=201)
    quote = previews.create(trader.user, market.yes, "buy", "10", "market")
    placed = orders.place_order(trader.user, token_id=market.yes, side="buy", size="10",
                                order_type="market", preview_id=quote["preview_id"])
    assert placed.status == "matched"
    rest = previews.create(trader.user, market.yes, "buy", "10", "limit", Decimal("0.30"))
    resting = orders.place_order(trader.user, token_id=market.yes, side="buy", size="10",
                                 order_type="limit", price=Decimal("0.30"),
                                 preview_id=rest["preview_id"])
    assert resting.status == "live"
    paper.fill(trader.user, market.no, "buy", Decimal("10"))
    shown = configs.preview(trader.user, {"target_address": whale, "size_multiplier": "1",
                                          "max_position_usdc": "50"})
    config = configs.create(trader.user, {"preview_id": str(shown["preview_id"])})
    return Scenario(market=market, whale=whale, config_id=str(config.id),
                    resting_order_id=resting.order_hash,
                    shared_token=sharing.share(trader.user, config.id)["token"])


def read_calls(s: Scenario) -> dict[str, dict[str, Any]]:
    """Arguments for each read tool."""
    return {
        "get_platform_stats": {},
        "get_trading_readiness": {},
        "search_markets": {"query": "bitcoin", "limit": 5},
        "get_market_details": {"slug": s.market.slug},
        "get_market_depth": {"token_id": s.market.yes, "levels": 3},
        "get_market_price_history": {"token_id": s.market.yes, "interval": "1w"},
        "list_top_traders": {"period": "WEEK", "order_by": "VOL", "limit": 50},
        "list_open_positions": {},
        "list_paper_positions": {"active_only": False},
        "list_trades": {"limit": 1},
        "get_user_summary": {},
        "list_copy_configs": {},
        "get_copy_config": {"config_id": s.config_id},
        "get_config_pnl": {"config_id": s.config_id},
        "get_config_quality": {"config_id": s.config_id, "period": "7d"},
        "get_config_status": {"config_id": s.config_id},
        "get_config_trades": {"config_id": s.config_id},
        "suggest_multiplier": {"target_address": s.whale, "balance": "1000"},
        "list_open_orders": {},
        "get_trader_profile": {"address": s.whale},
        "get_copyability_report": {"address": s.whale, "window": "7d", "rules": {
            "size_multiplier": "0.001", "max_position_usdc": "50"}},
        "get_shared_config": {"token": s.shared_token},
        "list_notifications": {"limit": 5},
    }


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_every_read_tool_returns_schema_valid_structured_content(mode, scenario, mcp_url,
                                                                 trader_key):
    key = trader_key(*SCOPES)
    calls = read_calls(scenario)
    assert set(calls) == set(READ_TOOLS)

    async def body(client: Client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        results = {}
        for name, arguments in calls.items():
            results[name] = await client.call_tool(name, arguments)
        return listed, results

    listed, results = run_client(mcp_url, key, mode, body)
    for name, result in results.items():
        assert not result.is_error, (name, result.structured_content)
        schema = listed[name].output_schema
        Draft202012Validator.check_schema(schema)
        errors = list(Draft202012Validator(schema).iter_errors(result.structured_content))
        assert not errors, (name, [e.message for e in errors])
        assert result.content[0].type == "text"
        assert listed[name].annotations.read_only_hint is True

    found = results
    assert [p["token_id"] for p in found["list_open_positions"].structured_content[
        "positions"]] == [scenario.market.yes]
    assert [o["order_id"] for o in found["list_open_orders"].structured_content[
        "orders"]] == [scenario.resting_order_id]
    trades = found["list_trades"].structured_content
    assert len(trades["trades"]) == 1 and trades["pagination"] == {
        "limit": 1, "offset": 0, "has_next": True}
    assert found["get_copy_config"].structured_content["id"] == scenario.config_id
    quality = found["get_config_quality"].structured_content
    assert (quality["config_id"], quality["period"], quality["copies"]) == (
        scenario.config_id, "7d", 0)
    # The manual market order shows its own stages: placement and acknowledgement.
    [manual] = [t for t in found["list_trades"].structured_content["trades"]]
    stages = manual["execution"]["stages"]
    assert stages["placement_ms"] >= 0 and stages["ack_ms"] >= 0
    assert manual["execution"]["source"] is None and stages["decision_ms"] is None
    assert found["list_paper_positions"].structured_content["positions"][0]["token_id"] == \
        scenario.market.no
    assert found["get_market_details"].structured_content["slug"] == scenario.market.slug
    assert scenario.whale in [t["address"].lower() for t in found[
        "list_top_traders"].structured_content["traders"]]
    # Money is a decimal string on the wire, never a JSON number.
    summary = found["get_user_summary"].structured_content
    assert isinstance(summary["fees_paid"], str) and Decimal(summary["fees_paid"]) >= 0


def test_business_failures_are_is_error_results_with_the_rest_code(scenario, mcp_url,
                                                                   trader_key):
    key = trader_key("read:markets", "read:account")

    async def body(client: Client):
        return (await client.call_tool("get_market_details", {"slug": "no-such-market"}),
                await client.call_tool("get_copy_config",
                                       {"config_id": "00000000-0000-0000-0000-000000000000"}),
                await client.call_tool("search_markets", {"query": "x", "limit": 0}),
                await client.call_tool("get_market_depth", {}))

    unknown, missing, out_of_range, no_token = run_client(mcp_url, key, "auto", body)
    assert unknown.is_error and unknown.structured_content["code"] == "not_found"
    assert missing.is_error and missing.structured_content["code"] == "not_found"
    assert out_of_range.is_error and out_of_range.structured_content["code"] == \
        "validation_failed"
    assert "limit" in out_of_range.structured_content["fields"]
    assert no_token.is_error and "token_id" in no_token.structured_content["fields"]
    assert set(unknown.structured_content) >= {"error", "code"}


def _required_only(schema: dict[str, Any], values: dict[str, Any], branch: int = 0
                   ) -> dict[str, Any]:
    """Exactly the arguments ``schema`` demands: ``required`` plus one ``anyOf`` branch."""
    names = list(schema.get("required", []))
    groups = schema.get("anyOf", [])
    if groups:
        names += groups[branch]["required"]
    return {name: values[name] for name in names}


def test_every_read_tool_succeeds_with_just_the_arguments_its_schema_requires(
        scenario, mcp_url, trader_key):
    key = trader_key(*SCOPES)
    values = {"slug": scenario.market.slug, "token_id": scenario.market.yes,
              "config_id": scenario.config_id, "target_address": scenario.whale,
              "query": scenario.market.slug.split("-")[0], "address": scenario.whale,
              "rules": {"size_multiplier": "0.001", "max_position_usdc": "50"},
              "token": scenario.shared_token}

    async def body(client: Client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        results = {}
        for name in READ_TOOLS:
            schema = listed[name].input_schema
            for branch in range(max(1, len(schema.get("anyOf", [])))):
                arguments = _required_only(schema, values, branch)
                results[name, tuple(arguments)] = await client.call_tool(name, arguments)
        return results

    results = run_client(mcp_url, key, "auto", body)
    failed = {call: result.structured_content for call, result in results.items()
              if result.is_error}
    assert not failed
    assert ("get_market_details", ("token_id",)) in results  # both branches were called


def test_one_of_argument_groups_are_stated_in_the_input_schema(scenario, mcp_url, trader_key):
    key = trader_key("read:markets")

    async def body(client: Client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        return listed["get_market_details"].input_schema, await client.call_tool(
            "get_market_details", {})

    schema, refused = run_client(mcp_url, key, "auto", body)
    assert schema["anyOf"] == [{"required": ["slug"]}, {"required": ["token_id"]}]
    # An empty call breaks the schema, and the service refuses it: the two agree.
    assert list(Draft202012Validator(schema).iter_errors({}))
    assert refused.is_error and refused.structured_content["code"] == "validation_failed"


def test_a_copyability_report_is_followed_to_its_end(scenario, mcp_url, trader_key, client):
    from tests.chain_venue import run_queued_jobs

    key = trader_key("read:markets")
    arguments = {"address": scenario.whale, "window": "7d", "delay_p50_ms": 1000,
                 "rules": {"size_multiplier": "0.001", "max_position_usdc": "50",
                           "price_deviation_bps": 5000}}

    async def ask(client: Client):
        return await client.call_tool("get_copyability_report", arguments)

    first = run_client(mcp_url, key, "auto", ask).structured_content
    assert first["status"] == "queued" and first["report"] is None
    # (an earlier test on this xdist worker may have left its own report job queued)
    assert "copyability.report" in run_queued_jobs(only={"copyability.report"})
    done = run_client(mcp_url, key, "auto", ask).structured_content
    assert done["id"] == first["id"] and done["status"] == "done"
    # The whale's two fills (a buy of 40000 and a sell of 10000), each 0.001x: 40 shares
    # bought, and the sell a quarter of the target's position, 10 of ours (the guard is
    # wide: the market's book is the shared scenario's).
    report = done["report"]
    assert report["fills"] == 2 and report["delays"]["source"] == "assumed"
    assert report["p50"]["copies"] == 2, report["p50"]["skips_by_reason"]
    rest = client.get(done["location"], headers={"Authorization": f"Bearer {key}"})
    assert rest.get_json()["report"] == report
