"""Every API timestamp is ISO 8601 in UTC (issue 29, "Numbers"): the answers mixed ISO 8601,
epoch seconds (a preview's recent trades, a decision's target trade, price history) and an
HTTP date (`last_trade_at`: "Fri, 27 Nov 2026 16:02:33 GMT", a datetime that reached Flask's
JSON encoder inside a free-form object).

The test walks the answers of every GET route the OpenAPI description lists (path
parameters filled from the data it made), a config preview and an MCP tool, after a fill,
a config and a copy decision exist, and checks every moment it finds."""

from __future__ import annotations

import json
import re
import secrets
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from models.base import utcnow
from models.copying import CopyIntent
from tests.api.test_configs import body as config_body
from tests.api.test_configs import whale  # noqa: F401 - a fixture
from tests.http_helpers import json_body
from tests.mcp_server.conftest import modern_meta

# A moment's key: `*_at`, `at`, and the window bounds.
MOMENT_KEYS = re.compile(r"(^|_)at$|^(since|until|end_date)$")
# Keys that once held epoch seconds; none may hold a number now.
EPOCH_KEYS = re.compile(r"^(t|ts|time|timestamp)$|_(ts|timestamp|time)$")
HTTP_DATE = re.compile(r"^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$")
LOOKS_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
# Paths whose ids this test has no row for (each is the same schema as a listed one).
UNFILLED = ("{wrap_id}", "{withdrawal_id}", "{claim_id}", "{channel_id}", "{report_id}")


def _is_utc_iso(text: str) -> bool:
    if "T" not in text:
        return False
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return moment.utcoffset() == timedelta(0)


def moment_problems(value: Any, where: str = "$") -> list[str]:
    """Every place in a JSON answer whose moment is not ISO 8601 UTC."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{where}.{key}"
            if MOMENT_KEYS.search(key) and item is not None and not (
                    isinstance(item, str) and _is_utc_iso(item)):
                found.append(f"{here} = {item!r}")
            elif EPOCH_KEYS.search(key) and isinstance(item, int | float) \
                    and not isinstance(item, bool):
                found.append(f"{here} = {item!r} (epoch)")
            else:
                found += moment_problems(item, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += moment_problems(item, f"{where}[{index}]")
    elif isinstance(value, str) and (HTTP_DATE.match(value) or (
            LOOKS_ISO.match(value) and not _is_utc_iso(value))):
        found.append(f"{where} = {value!r}")
    return found


def test_the_walker_sees_each_wrong_form() -> None:
    wrong = {"last_trade_at": "Fri, 27 Nov 2026 16:02:33 GMT", "note": "2026-11-27 16:02",
             "points": [{"t": 1795836674}], "target_trade": {"timestamp": 1795836674},
             "at": "2026-11-27T16:02:33+01:00", "seen_at": "2026-11-27T16:02:33"}
    assert len(moment_problems(wrong)) == 6
    right = {"last_trade_at": "2026-11-27T16:02:33+00:00", "at": "2026-11-27T16:02:33Z",
             "expires_at": None, "date": "2026-11-27", "count": 3}
    assert moment_problems(right) == []


def _decision(config_id: str, user_id: Any, token: str, slug: str) -> None:
    """A copied decision of a target fill, as the engine records one."""
    seen = utcnow() - timedelta(minutes=3)
    CopyIntent.create(config=config_id, user_id=user_id, target_trade_key=secrets.token_hex(8),
                      target_address="0x" + "5" * 40, target_side="BUY",
                      target_size=Decimal(10), target_price=Decimal("0.5"),
                      target_timestamp=int(seen.timestamp()) - 2, token_id=token,
                      market_slug=slug, paper=True, status="filled", side="BUY",
                      size=Decimal(5), price=Decimal("0.5"), filled_size=Decimal(5),
                      filled_price=Decimal("0.5"), seen_at=seen, settled_at=seen,
                      created_at=seen)


def test_every_answer_writes_its_moments_in_iso_8601_utc(
        client, auth_headers, api_key, market,
        me, whale):  # noqa: F811 - the imported fixtures
    target, whale_market = whale
    # A fill of our own (trades, positions, PnL), a config (preview, status, decisions).
    order = {"token_id": market.yes, "side": "buy", "size": "10", "order_type": "market"}
    quote = json_body(client.post("/api/markets/order/preview", json=order, headers=auth_headers))
    placed = client.post("/api/markets/order", headers=auth_headers,
                         json={**order, "preview_id": quote["preview_id"]})
    assert json_body(placed)["status"] == "filled"
    preview = client.post("/api/configs/preview", json=config_body(target), headers=auth_headers)
    assert preview.status_code == 200
    answers: dict[str, Any] = {"POST /api/configs/preview": json_body(preview)}
    assert answers["POST /api/configs/preview"]["target"]["last_trade_at"]
    created = client.post("/api/configs", headers=auth_headers,
                          json={"preview_id": answers["POST /api/configs/preview"]["preview_id"]})
    config_id = json_body(created)["id"]
    _decision(config_id, me.user.id, whale_market["token_ids"][0], whale_market["slug"])
    [trade] = json_body(client.get("/api/trades", headers=auth_headers))
    shared = client.post(f"/api/configs/{config_id}/share", headers=auth_headers,
                         json={"show_results": True})
    assert shared.status_code in (200, 201), shared.get_data(as_text=True)
    ids = {"{config_id}": config_id, "{trade_id}": trade["id"], "{slug}": market.slug,
           "{address}": target, "{order_id}": trade["order_id"],
           "{token}": json_body(shared)["token"]}

    spec = client.get("/openapi.json").get_json()
    for path, operations in spec["paths"].items():
        if "get" not in operations or not path.startswith("/api/") or any(
                name in path for name in UNFILLED):
            continue
        url = path
        for name, value in ids.items():
            url = url.replace(name, str(value))
        assert "{" not in url, f"no value for {url}"
        answer = client.get(url, headers=auth_headers)
        if answer.is_json and answer.status_code < 400:
            answers[f"GET {url}"] = json_body(answer)
    # A decision of a target fill, price history and a profile's trades were among them.
    assert answers[f"GET /api/configs/{config_id}/trades"][0]["target_trade"]["traded_at"]
    assert answers[f"GET /api/markets/{market.slug}/price-history"]["points"]
    assert answers[f"GET /api/traders/{target}"]["recent_trades"]

    # The MCP tools answer through the same encoder.
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "get_market_price_history", "arguments": {"token_id": market.yes},
        "_meta": modern_meta()}}
    mcp = client.post("/api/mcp", json=call, headers={
        "Authorization": f"Bearer {api_key('read:markets')}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
        "Mcp-Name": "get_market_price_history"})
    assert mcp.status_code == 200, mcp.get_data(as_text=True)
    answers["MCP get_market_price_history"] = json_body(mcp)["result"]["structuredContent"]

    problems = {name: found for name, answer in answers.items()
                if (found := moment_problems(answer))}
    assert problems == {}, json.dumps(problems, indent=1)
    assert len(answers) > 30  # the walk reached the API, not a handful of routes
