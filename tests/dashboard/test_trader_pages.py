"""The trader's pages in a browser, at desktop and phone width: the overview (home), traders
(leaderboard -> profile -> copy), markets (search -> market page -> order ticket -> your
position), and positions with sell and claim; numbers read like money; axe finds no serious
or critical violation; a phone never scrolls sideways."""

from __future__ import annotations

import json
import re
import secrets
from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from models import User
from services.trading import orders, previews
from tests.chain_venue import run_queued_jobs
from tests.dashboard.conftest import accessible_and_fits_a_phone, new_context, screenshot, sign_in
from tests.services.copying.test_pnl_history import account_fills
from tests.trading_support import onboarded_trader


def test_markets_search_ticket_and_position_with_the_overview(page, inbox, venue_control):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    onboarded_trader(user, "200", venue_control)
    slug = f"dash-ticket-{secrets.token_hex(4)}"
    venue_control.add_market(slug, liquidity=True, fair_price="0.5", category="crypto",
                             question=f"Will the ticket test {slug} pass?")

    page.goto("/dashboard")
    assert page.locator("h1").inner_text() == "Overview"
    # No chain here: the cash cannot be read, and the page says so instead of guessing.
    assert page.locator("#cash").inner_text() == "—"
    assert "balances" in page.locator(".alert").first.inner_text()
    assert page.locator("#positions-value").inner_text() == "0.00 pUSD"
    accessible_and_fits_a_phone(page, "overview-empty")

    page.goto(f"/dashboard/markets?q={slug}")
    page.locator(f"tr[data-slug='{slug}'] a").click()
    page.wait_for_url(re.compile(rf".*/dashboard/markets/{slug}$"))
    page.wait_for_selector("#pnl-chart")
    accessible_and_fits_a_phone(page, "market")

    page.fill("#ticket input[name=size]", "10")
    page.click("#ticket button:has-text('Preview')")
    page.wait_for_selector("#order-preview")
    preview = page.locator("#order-preview").inner_text()
    assert re.search(r"Cost\s+\d+\.\d{2} pUSD", preview), preview
    # the order's time in force is explained where it is shown
    assert "fill or kill" in page.locator("#order-preview abbr.term").get_attribute("title")
    page.click("#order-preview button:has-text('Place order')")
    placed = page.locator("#order-placed")
    placed.wait_for()
    assert placed.get_attribute("data-status") == "filled", placed.inner_text()
    assert re.search(r"Placed in \d+ ms · the venue answered in \d+ ms",
                     page.locator("#order-stages").inner_text())

    page.goto(f"/dashboard/markets/{slug}")
    assert re.match(r"10\.00 Yes shares", page.locator("#held").inner_text())

    page.goto("/dashboard")
    activity = page.locator("#recent-activity li").first.inner_text()
    # which outcome it bought, as the ticket says it ("10.00 of" a market was not enough)
    assert re.search(r"buy 10\.00 Yes shares of .* at 0\.\d{2}", activity), activity
    value = page.locator("#positions-value").inner_text()
    assert re.fullmatch(r"[1-9][\d,]*\.\d{2} pUSD", value), value
    screenshot(page, "overview")

    # Sell part of it from the positions page: the ticket opens prefilled.
    page.goto("/dashboard/positions")
    # a trade names its outcome beside its side, as the positions above it do
    assert page.locator("#live-trades td[data-label=Side]").first.inner_text() == "buy Yes"
    page.locator("#live-positions a:has-text('Sell')").first.click()
    page.wait_for_url(re.compile(rf".*/dashboard/markets/{slug}\?.*side=sell.*"))
    assert page.locator("#ticket input[name=side][value=sell]").is_checked()
    assert Decimal(page.locator("#ticket input[name=size]").input_value()) == Decimal(10)

    # Spend pUSD: a market buy sized by the amount it spends, fee included.
    page.goto(f"/dashboard/markets/{slug}")
    page.check("#ticket input[name=sizing][value=amount]")
    page.fill("#ticket input[name=amount]", "5")
    page.click("#ticket button:has-text('Preview')")
    page.wait_for_selector("#order-preview")
    preview = page.locator("#order-preview").inner_text()
    assert "spending at most 5.00 pUSD" in preview and "Spends at most\n5.00 pUSD" in preview
    bought = Decimal(re.search(r"Estimated shares\s+([\d.]+)", preview).group(1))
    page.click("#order-preview button:has-text('Place order')")
    page.locator("#order-placed").wait_for()
    assert page.locator("#order-placed").get_attribute("data-status") == "filled"
    page.goto(f"/dashboard/markets/{slug}")
    held = Decimal(re.match(r"([\d.]+) Yes shares", page.locator("#held").inner_text()).group(1))
    assert held == Decimal(10) + bought


def test_the_overview_shows_pnl_over_24_hours_and_7_days(page, inbox, venue_control):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    onboarded_trader(user, "50", venue_control)
    account_fills(user)  # closed round trips ten days, two days and one hour ago

    page.goto("/dashboard")
    assert page.locator("#total-pnl").inner_text() == "+2.37 pUSD"
    assert page.locator("#pnl-24h").inner_text() == "+0.87 pUSD"
    assert page.locator("#pnl-7d").inner_text() == "+0.37 pUSD"
    assert "pos" in page.locator("#pnl-24h").get_attribute("class")
    accessible_and_fits_a_phone(page, "overview-pnl")


def test_leaderboard_profile_and_copy_this_trader(page, inbox, venue_control):
    sign_in(page, inbox)
    fills = []
    for _ in range(4):
        fills += venue_control.call("POST", "/whales/tick", None, expect=201)["fills"]
    whale = fills[0]["proxyWallet"]

    page.goto("/dashboard/traders?period=all&order_by=volume")
    page.wait_for_selector("#leaderboard")
    accessible_and_fits_a_phone(page, "traders")
    page.goto(f"/dashboard/traders/{whale}")
    chart = page.locator("#pnl-chart")
    series = json.loads(chart.get_attribute("data-series"))
    assert len(series["at"]) >= 2 and series["at"] == sorted(series["at"])
    page.wait_for_selector("#pnl-chart .u-wrap, #pnl-chart canvas")
    accessible_and_fits_a_phone(page, "trader")

    # The copyability report: asked, built by its job, shown by the polling fragment.
    page.select_option("#copyability select[name=window]", "7d")
    page.click("#copyability button:has-text('Replay')")
    page.wait_for_selector("#copyability-result [data-status=queued]")
    # (an earlier test on this xdist worker may have left its own report job queued)
    assert "copyability.report" in run_queued_jobs(only={"copyability.report"})
    page.wait_for_selector("#copyability-result [data-status=done]")
    assert page.locator("#copyability-result [data-p50-pnl]").inner_text().strip()
    accessible_and_fits_a_phone(page, "trader-copyability")

    # No balance yet: no multiplier is suggested, and the page says why before the form asks.
    assert "until your wallet shows a balance" in page.locator("#no-suggestion").inner_text()
    page.click("#copy-trader")
    page.wait_for_url(re.compile(r".*/dashboard/configs/new\?.*"))
    assert page.locator("input[name=target_address]").input_value() == whale.lower()


@pytest.mark.parametrize("path", ["/dashboard/positions", "/dashboard/configs",
                                  "/dashboard/wallet", "/dashboard/markets"])
def test_every_page_fits_a_phone_and_passes_axe(page, inbox, venue_control, path):
    email = sign_in(page, inbox)
    onboarded_trader(User.get(User.email == email), "50", venue_control)
    page.goto(path)
    page.wait_for_load_state("networkidle")
    accessible_and_fits_a_phone(page, "page" + path.replace("/", "-"))


def test_prices_to_each_markets_tick_and_moments_in_the_readers_zone(
        browser, live_server, inbox, venue_control):
    """A reader in New York: the pages' moments are New York's, the zone named; each price
    is written to its own market's tick (0.01 and 0.001), money to the cent."""
    context = new_context(browser, live_server, locale="en-US",
                          timezone_id="America/New_York")
    page = context.new_page()
    try:
        user = User.get(User.email == sign_in(page, inbox))
        onboarded_trader(user, "100", venue_control)
        tokens = {}
        for tick in ("0.01", "0.001"):
            slug = f"tick-{tick[2:]}-{secrets.token_hex(3)}"
            tokens[tick] = venue_control.add_market(
                slug, liquidity=True, fair_price="0.5", tick_size=tick,
                question=f"Will {slug} show its tick?")["token_ids"][0]
            quote = previews.create(user, tokens[tick], "buy", "10", "market", None)
            assert orders.place_order(user, token_id=tokens[tick], side="buy", size="10",
                                      order_type="market",
                                      preview_id=quote["preview_id"]).status == "matched"
        decimals = {"0.01": 2, "0.001": 3}

        page.goto("/dashboard/positions")
        for tick, token in tokens.items():
            row = page.locator(f"#live-positions tr[data-token-id='{token}']")
            row.wait_for()
            # The price sits under the value, in the Value column ("at 0.50").
            shown = row.locator("td[data-label=Value] [data-price]").inner_text()
            assert re.fullmatch(rf"at 0\.\d{{{decimals[tick]}}}", shown), (tick, shown)
            value = row.locator("td[data-label=Value]").inner_text().splitlines()[0]
            assert re.fullmatch(r"\d+\.\d{2} pUSD", value), value
        page.wait_for_selector("#live-trades tbody tr")
        prices = sorted(len(cell.split(".")[1]) for cell in page.locator(
            "#live-trades td[data-label=Price]").all_inner_texts())
        assert prices == [2, 3], prices

        # A moment: UTC in the page's source, New York's on the screen, the zone named.
        moment = page.locator("#live-trades time.local").first
        moment.wait_for()
        page.wait_for_function("() => document.querySelector('#live-trades time[data-local]')")
        sent = datetime.fromisoformat(moment.get_attribute("datetime"))
        there = sent.astimezone(ZoneInfo("America/New_York"))
        assert there.strftime("%H") != sent.strftime("%H")  # the test means something
        assert there.tzname() in moment.inner_text() and "UTC" not in moment.inner_text()
        hour = there.strftime("%I").lstrip("0")
        assert re.search(rf"\b0?{hour}:{there.strftime('%M')}\b", moment.inner_text()), (
            moment.inner_text(), there)

        page.goto("/dashboard")  # the overview names the zone in each moment
        latest = page.locator("#recent-activity time.local").first
        page.wait_for_function("() => document.querySelector('#recent-activity time[data-local]')")
        assert there.tzname() in latest.inner_text(), latest.inner_text()
        assert "UTC" not in latest.inner_text()
    finally:
        context.close()


def test_copy_this_trader_prefills_the_suggested_multiplier(page, inbox, venue_control):
    user = User.get(User.email == sign_in(page, inbox))
    onboarded_trader(user, "200", venue_control)  # a balance to size against
    fills = []
    for _ in range(3):
        fills += venue_control.call("POST", "/whales/tick", None, expect=201)["fills"]
    whale = fills[0]["proxyWallet"]

    page.goto(f"/dashboard/traders/{whale}")
    figure = page.locator(".figure:has-text('Suggested multiplier') strong").inner_text()
    suggested = Decimal(figure.lstrip("\N{MULTIPLICATION SIGN}"))
    assert suggested > 0 and page.locator("#no-suggestion").count() == 0
    page.click("#copy-trader")
    page.wait_for_url(re.compile(r".*/dashboard/configs/new\?.*"))
    assert page.locator("input[name=target_address]").input_value() == whale.lower()
    assert Decimal(page.locator("input[name=size_multiplier]").input_value()) == suggested
