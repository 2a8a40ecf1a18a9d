"""The config page's execution quality in a browser, at desktop and phone width: the stage
figures, the latency-per-stage chart and the slippage histogram (uPlot), axe-clean."""

from __future__ import annotations

import secrets
from datetime import timedelta
from decimal import Decimal

from models import User
from models.base import utcnow
from models.copying import CopyConfig, CopyIntent
from tests.dashboard.conftest import sign_in
from tests.dashboard.test_trader_pages import accessible_and_fits_a_phone


def _copy(config: CopyConfig, minutes_ago: int, slippage: str, ack: int) -> None:
    at = utcnow() - timedelta(minutes=minutes_ago)
    CopyIntent.create(
        config=config.id, user_id=config.user_id, target_trade_key=secrets.token_hex(8),
        target_address=config.target_address, token_id="7", status="filled", side="BUY",
        seen_at=at, created_at=at, settled_at=at, paper=True, target_price=Decimal("0.5"),
        filled_size=Decimal(10), filled_price=Decimal("0.51"), fee=Decimal("0.01"),
        slippage_bps=Decimal(slippage), detection_source="feed", detection_delay_ms=1200,
        decision_ms=3, placement_ms=5, ack_ms=ack, settlement_ms=2)


def test_the_config_page_charts_latency_per_stage_and_slippage(page, inbox):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    config = CopyConfig.create(user=user.id, target_address="0x" + secrets.token_hex(20),
                               target_name="Quality whale", size_multiplier=Decimal(1),
                               max_position_usdc=Decimal(100), price_deviation_bps=500,
                               paper_trading=True, is_active=False, blocked_categories="[]")
    for minutes, slippage, ack in ((50, "200", 40), (30, "-20", 60), (10, "210", 80)):
        _copy(config, minutes, slippage, ack)

    page.goto(f"/dashboard/configs/{config.id}")
    page.click("#quality summary")  # folded at first: drawn when opened
    page.wait_for_selector("#latency-chart .uplot")
    page.wait_for_selector("#slippage-chart .uplot")
    section = page.locator("#quality").inner_text()
    assert "3 copies · 3 filled (100.0 %)" in section, section
    assert page.locator("#slippage-mean").inner_text() == "130"
    ack = page.locator("#quality-stages tr[data-stage=ack]").inner_text()
    assert "60 ms" in ack and "80 ms" in ack, ack
    legend = page.locator("#latency-chart .u-legend").inner_text()
    assert "ack (ms)" in legend and "taker delay (ms)" in legend, legend
    # each copy's source and slippage in the decisions table, newest first
    page.wait_for_selector("#decisions tr[data-decision=copied]")
    rows = page.locator("#decisions tr[data-decision=copied]")
    assert [rows.nth(n).locator("[data-slippage]").inner_text() for n in range(3)] == [
        "+210 bps", "-20 bps", "+200 bps"]
    assert rows.first.locator("[data-source]").inner_text() == "feed"
    accessible_and_fits_a_phone(page, "config-quality")


def test_a_config_without_copies_says_so_instead_of_charting(page, inbox):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    config = CopyConfig.create(user=user.id, target_address="0x" + secrets.token_hex(20),
                               size_multiplier=Decimal(1), max_position_usdc=Decimal(100),
                               price_deviation_bps=500, paper_trading=True, is_active=False,
                               blocked_categories="[]")
    page.goto(f"/dashboard/configs/{config.id}")
    # the PnL chart says it has nothing yet in words, not an empty 0-100 axis
    page.wait_for_selector("#pnl-chart .chart-empty")
    assert "No fills yet" in page.locator("#pnl-chart").inner_text()
    assert page.locator("#pnl-chart canvas").count() == 0
    page.click("#quality summary")
    page.wait_for_selector("#latency-chart .chart-empty")
    assert "no slippage" in page.locator("#slippage-chart").inner_text()
    assert "slippage —" in page.locator("#quality").inner_text()
