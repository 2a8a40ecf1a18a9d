"""The screened leaderboard in a browser (issue 46): the traders page sorts, filters and
searches by the replay's columns and shows flags, at desktop and 390 px; the comparison;
and a row's "Copy this trader" opens the form prefilled with the replay's expectations."""

from __future__ import annotations

import re
from decimal import Decimal

from tests.api.test_screened_traders import (  # noqa: F401 - the fixtures
    fresh_budget,
    scripted_clock,
    traders,
)
from tests.dashboard.conftest import DESKTOP, accessible_and_fits_a_phone, docs_shots, sign_in


def _ours(page, traders) -> list[str]:  # noqa: F811 - the fixture's value
    wanted = {traders["swing"], traders["scalper"]}
    return [a for a in page.locator("#leaderboard tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.address)") if a in wanted]


def test_the_traders_page_sorts_filters_and_flags(page, inbox, bound_db, traders,  # noqa: F811
                                                  fresh_budget):  # noqa: F811
    from services.copying import screening

    for wallet in (traders["swing"], traders["scalper"]):
        assert screening.screen(wallet) is True
    sign_in(page, inbox)

    page.goto("/dashboard/traders?period=all&order_by=volume&sort=trades")
    page.wait_for_selector("#leaderboard")
    assert _ours(page, traders) == [traders["scalper"], traders["swing"]]
    scalper = page.locator(f"tr[data-address='{traders['scalper']}']")
    assert scalper.locator("[data-col=trades]").inner_text() == "24"
    assert scalper.locator(".flag[data-flag=high_frequency]").inner_text() == "high frequency"
    assert "median hold seconds 5" in scalper.locator(
        ".flag[data-flag=high_frequency]").get_attribute("title")
    p50 = scalper.locator("[data-col=copier_pnl_p50]").inner_text()
    assert re.fullmatch(r"[+-]?[\d,]+\.\d{2} pUSD", p50), p50
    assert "queue" in page.locator("#screening-note").inner_text()
    # "Copy this trader" is in sight on a desktop, though sixteen columns scroll in the card
    copy = scalper.locator("a.copy-row").bounding_box()
    card = page.locator("#leaderboard").evaluate(
        "t => t.closest('.table-wrap').getBoundingClientRect().right")
    assert copy["x"] + copy["width"] <= card, (copy, card)
    accessible_and_fits_a_phone(page, "traders-screened")
    docs_shots(page, "traders-screened")  # the docs' picture of the screened leaderboard
    page.set_viewport_size(DESKTOP)

    # The column header sorts the other way.
    page.locator("#leaderboard thead a:has-text('Trades')").click()
    page.wait_for_url(re.compile(r".*direction=asc.*"))
    assert _ours(page, traders) == [traders["swing"], traders["scalper"]]

    # The filters: a flag, a column's bounds, a search.
    page.select_option("#trader-filters select[name=flag]", "high_frequency")
    page.click("#trader-filters button:has-text('Show')")
    page.wait_for_url(re.compile(r".*flag=high_frequency.*"))
    assert _ours(page, traders) == [traders["scalper"]]
    page.goto("/dashboard/traders?period=all&order_by=volume&column=trades&low=1&high=10")
    assert _ours(page, traders) == [traders["swing"]]
    page.goto(f"/dashboard/traders?period=all&order_by=volume&q={traders['swing'][2:14]}")
    assert _ours(page, traders) == [traders["swing"]]

    # The profile shows the replay and its flags with their numbers.
    page.goto(f"/dashboard/traders/{traders['scalper']}")
    flags = page.locator("#profile-flags").inner_text()
    assert "high frequency" in flags and "median hold seconds 5" in flags
    page.goto(f"/dashboard/traders?period=all&order_by=volume&q={traders['swing'][2:14]}")

    # A row's "Copy this trader": the form filled with the replay's rules, its numbers beside.
    page.locator(f"tr[data-address='{traders['swing']}'] a.copy-row").click()
    page.wait_for_url(re.compile(r".*/dashboard/configs/new\?.*"))
    assert page.locator("input[name=target_address]").input_value() == traders["swing"]
    assert Decimal(page.locator("input[name=size_multiplier]").input_value()) == 1
    assert Decimal(page.locator("input[name=max_position_usdc]").input_value()) == 100
    expected = page.locator("#expected [data-expected-p50]").inner_text()
    assert re.fullmatch(r"[+-]?[\d,]+\.\d{2} pUSD", expected), expected
    accessible_and_fits_a_phone(page, "config-new-expected")


def test_compare_shows_replays_side_by_side(page, inbox, bound_db, traders,  # noqa: F811
                                            fresh_budget):  # noqa: F811
    from services.copying import screening

    for wallet in (traders["swing"], traders["scalper"]):
        assert screening.screen(wallet) is True
    sign_in(page, inbox)
    page.goto(f"/dashboard/traders/compare?addresses={traders['swing']},{traders['scalper']}")
    page.wait_for_selector("#compare-chart canvas, #compare-chart .u-wrap")
    rows = page.locator("#compared tbody tr")
    assert rows.count() == 2
    assert re.fullmatch(r"[\d,]+\.\d{2} pUSD",
                        rows.first.locator("[data-capital]").inner_text())
    # the chart's legend names them as the table does
    legend = page.locator("#compare-chart .u-legend").inner_text()
    assert f"{traders['swing'][:6]}…{traders['swing'][-4:]}" in legend, legend
    accessible_and_fits_a_phone(page, "traders-compare")
    docs_shots(page, "traders-compare")
