"""The MCP Inspector CLI lists our tools.

package.json pins the Inspector at 1.0.3: its newer releases need Node 22, and this
one runs on the Node 20 of our machines. MCP_INSPECTOR may point at another binary.
"""

from __future__ import annotations

import json
import os
import subprocess

from config import ROOT

INSPECTOR = os.environ.get("MCP_INSPECTOR") or str(ROOT / "node_modules/.bin/mcp-inspector")


def test_inspector_cli_lists_the_tools_a_key_permits(mcp_url, api_key, user):
    assert os.path.exists(INSPECTOR), "run `make setup` (npm install) for the MCP Inspector"
    token = api_key("read:markets", owner=user)
    completed = subprocess.run(
        [INSPECTOR, "--cli", mcp_url, "--transport", "http",
         "--header", f"Authorization: Bearer {token}", "--method", "tools/list"],
        capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    listed = json.loads(completed.stdout[completed.stdout.index("{"):])
    assert {t["name"] for t in listed["tools"]} == {
        "get_platform_stats", "search_markets", "get_market_details", "get_market_depth",
        "get_market_price_history", "list_top_traders", "get_trader_profile",
        "get_copyability_report", "suggest_multiplier", "list_open_orders", "get_shared_config"}
