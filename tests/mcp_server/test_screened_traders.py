"""MCP `list_top_traders` over the official SDK client sorts, filters and searches the
screened leaderboard as GET /api/traders does, and refuses unknown values naming the field
(issue 46)."""

from __future__ import annotations

from mcp import Client

from tests.api.test_copyability import scripted_clock  # noqa: F401 - the fixture
from tests.api.test_screened_traders import fresh_budget, traders  # noqa: F401 - fixtures
from tests.mcp_server.conftest import run_client


def test_list_top_traders_sorts_filters_and_refuses_unknown_values(
        mcp_url, api_key, bound_db, traders, fresh_budget):  # noqa: F811
    from services.copying import screening

    for wallet in (traders["swing"], traders["scalper"]):
        assert screening.screen(wallet) is True
    ours = {traders["swing"], traders["scalper"]}
    board = {"period": "ALL", "order_by": "VOL", "limit": 50}

    async def body(client: Client):
        return (await client.call_tool("list_top_traders", {**board, "sort": "trades",
                                                            "direction": "asc"}),
                await client.call_tool("list_top_traders", {**board,
                                                            "flag": ["high_frequency"]}),
                await client.call_tool("list_top_traders", {**board, "q": traders["swing"]}),
                await client.call_tool("list_top_traders", {**board, "sort": "luck"}),
                await client.call_tool("list_top_traders", {**board, "flag": ["whale"]}))

    by_trades, flagged, found, bad_sort, bad_flag = run_client(
        mcp_url, api_key("read:markets"), "auto", body)
    rows = by_trades.structured_content["traders"]
    assert [r["address"] for r in rows if r["address"] in ours] == [traders["swing"],
                                                                    traders["scalper"]]
    scalper = next(r for r in rows if r["address"] == traders["scalper"])
    assert scalper["screening"]["kind"] == "replay" and scalper["screening"]["fills"] == 24
    assert [r["address"] for r in flagged.structured_content["traders"]
            if r["address"] in ours] == [traders["scalper"]]
    assert [r["address"] for r in found.structured_content["traders"]] == [traders["swing"]]
    for refused, field in ((bad_sort, "sort"), (bad_flag, "flag")):
        assert refused.is_error
        assert refused.structured_content["code"] == "validation_failed"
        assert field in refused.structured_content["fields"]
