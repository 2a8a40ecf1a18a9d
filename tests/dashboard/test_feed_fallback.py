"""Killing the RTDS feed mid-run (the sandbox closes every connection and refuses new ones):
the config page, refreshing its status by itself, shows the fallback to polling within
30 s, MCP's get_config_status says the same, and every fill the target makes before,
during and after the outage (one of them in the moment the feed dies, before the engine
can know) is copied exactly once (issue 30, "Done when")."""

from __future__ import annotations

import secrets
import threading
import time
from decimal import Decimal
from typing import Any

from eth_account import Account

from models import User
from models.copying import CopyConfig
from tests.dashboard.conftest import sign_in
from tests.dashboard.test_configs import _wait
from tests.mcp_server.conftest import run_client
from tests.worker.copy_engine.conftest import intents_of

FALLBACK_SHOWN_WITHIN = 30.0  # seconds, the bound


def _down(control, enabled: bool) -> None:
    control.call("POST", "/rtds/down", {"enabled": enabled}, expect=200)


def _trade(control, target: str, token: str) -> str:
    """The target buys 20 shares; the trade's transaction hash."""
    answer = control.call("POST", "/trades", {"wallet": target, "token_id": token,
                                              "side": "BUY", "size": "20", "price": "0.5"},
                          expect=201)
    [tx] = {fill["transactionHash"] for fill in answer["fills"]}
    return tx


def _mcp_status(url: str, key: str, config_id: str) -> dict[str, Any]:
    """get_config_status through the official MCP client (in a thread of its own: the
    browser's sync API holds this one's event loop)."""
    box: dict[str, Any] = {}

    async def body(client):
        return await client.call_tool("get_config_status", {"config_id": config_id})

    def call() -> None:
        try:
            box["result"] = run_client(f"{url}/api/mcp", key, "auto", body)
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=call)
    thread.start()
    thread.join(60)
    if "error" in box:
        raise box["error"]
    result = box["result"]
    assert not result.is_error, result.structured_content
    return result.structured_content


def _copied(config: CopyConfig, count: int):
    """A check: ``count`` intents, all settled (``None`` until then)."""
    def check():
        rows = intents_of(config)
        return rows if len(rows) >= count and all(r.status != "pending" for r in rows) else None
    return check


def test_killing_the_feed_shows_polling_within_30_s_and_loses_no_fill(
        page, inbox, venue_control, copy_engine, live_server, api_key):
    market = venue_control.add_market(f"dash-{secrets.token_hex(5)}", liquidity=True,
                                      fair_price="0.5", category="politics")
    yes = market["token_ids"][0]
    target = Account.create().address.lower()
    user = User.get(User.email == sign_in(page, inbox))
    config = CopyConfig.create(user=user.id, target_address=target, target_name="Feed whale",
                               size_multiplier=Decimal("0.5"), max_position_usdc=Decimal(1000),
                               price_deviation_bps=500, paper_trading=True, is_active=True,
                               blocked_categories="[]")
    page.goto(f"/dashboard/configs/{config.id}")
    status = page.locator("#config-status")
    _wait(lambda: (rt := copy_engine.targets.get(target)) is not None and rt.ready.is_set())
    status.locator("[data-detection=feed]").wait_for(timeout=20_000)
    key = api_key("read:account", owner=user)
    assert _mcp_status(live_server, key, str(config.id))["detection"] == "feed"
    sent = [_trade(venue_control, target, yes)]  # mid-run: the feed copies this one
    _wait(_copied(config, 1))
    assert copy_engine.stats.feed_fills == 1

    try:
        _down(venue_control, True)
        killed = time.monotonic()
        # A fill in the moment the feed dies, before the engine has noticed anything.
        sent.append(_trade(venue_control, target, yes))
        # No reload: the status fragment refreshes itself (hx-trigger every 2 s).
        status.locator("[data-detection=poll]").wait_for(
            timeout=FALLBACK_SHOWN_WITHIN * 1000)
        shown_after = time.monotonic() - killed
        assert shown_after <= FALLBACK_SHOWN_WITHIN, shown_after
        assert status.locator("[data-gap=open]").count() == 1
        assert "polling since" in status.inner_text()
        # MCP shows the same fallback: polling since the gap began, the gap still open.
        shown = _mcp_status(live_server, key, str(config.id))
        assert shown["detection"] == "poll" and shown["detection_last_gap_at"]
        assert shown["detection_since"] == shown["detection_last_gap_at"]
        assert shown["polls_per_minute"] >= 1
        # The target trades while the feed is dead: polling finds every fill.
        sent += [_trade(venue_control, target, yes) for _ in range(3)]
        _wait(_copied(config, 5))
    finally:
        _down(venue_control, False)
    status.locator("[data-detection=feed]").wait_for(timeout=30_000)
    assert status.locator("[data-gap=closed]").count() == 1
    sent.append(_trade(venue_control, target, yes))  # and the feed copies again
    _wait(_copied(config, 6))
    # Polling goes on as a backstop and the feed replays nothing: give both time to copy
    # a fill again (more polls of the target than it took to copy the outage's fills).
    polls = copy_engine.stats.polls
    _wait(lambda: copy_engine.stats.polls >= polls + 5)

    rows = intents_of(config)
    assert len(rows) == 6, [(r.target_trade_key, r.status) for r in rows]
    assert all(r.status == "filled" for r in rows), [(r.status, r.reason) for r in rows]
    assert len({r.target_trade_key for r in rows}) == 6
    assert sorted(r.target_tx_hash for r in rows) == sorted(sent)
    assert copy_engine.stats.poll_fills >= 3  # the outage's fills came by polling
    back = _mcp_status(live_server, key, str(config.id))
    assert back["detection"] == "feed" and back["detection_last_gap_seconds"] > 0
    page.locator("#decisions tr[data-decision=copied]").nth(5).wait_for()
    assert page.locator("#decisions tr[data-decision=copied]").count() == 6
