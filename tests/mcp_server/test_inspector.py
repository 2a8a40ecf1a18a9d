"""The MCP Inspector CLI lists our tools, when it is installed.

The Inspector is not a project dependency: its current releases need Node 22 and pull a
few hundred packages, so it is not in package.json. Point MCP_INSPECTOR at an installed
``mcp-inspector`` binary (e.g. ``npm install --prefix /tmp/insp
@modelcontextprotocol/inspector@1`` then ``/tmp/insp/node_modules/.bin/mcp-inspector``)
to run this test; without it the test is skipped and says so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

INSPECTOR = os.environ.get("MCP_INSPECTOR") or shutil.which("mcp-inspector")


@pytest.mark.skipif(not INSPECTOR, reason="MCP Inspector CLI not installed (set MCP_INSPECTOR)")
def test_inspector_cli_lists_the_tools_a_key_permits(mcp_url, api_key, user):
    token = api_key("read:markets", owner=user)
    completed = subprocess.run(
        [INSPECTOR, "--cli", mcp_url, "--transport", "http",
         "--header", f"Authorization: Bearer {token}", "--method", "tools/list"],
        capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    listed = json.loads(completed.stdout[completed.stdout.index("{"):])
    assert {t["name"] for t in listed["tools"]} == {
        "get_platform_stats", "search_markets", "get_market_details", "get_market_depth",
        "get_market_price_history", "list_top_traders", "suggest_multiplier",
        "list_open_orders"}
