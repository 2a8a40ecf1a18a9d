"""Shared setups (issue 45) in a real browser: the owner makes a link on the config page, a
second user opens it, reads the rules in words and uses them to prefill a config of their
own; the owner revokes it and the link stops working."""

from __future__ import annotations

import re
import secrets
from decimal import Decimal

from eth_account import Account

from models.copying import CopyConfig
from models.user import User
from tests.dashboard.conftest import (
    accessible_and_fits_a_phone,
    new_context,
    screenshot,
    sign_in,
)


def test_a_second_user_uses_a_shared_link_then_it_is_revoked(page, browser, live_server,
                                                             inbox, venue_control):
    venue_control.add_market(f"shr-{secrets.token_hex(5)}", liquidity=True, fair_price="0.5",
                             category="politics")
    target = Account.create().address.lower()
    owner_email = sign_in(page, inbox)
    page.goto("/dashboard/configs/new")
    page.fill("input[name=target_address]", target)
    page.fill("input[name=target_name]", "My secret label")
    page.fill("input[name=size_multiplier]", "0.5")
    page.fill("input[name=max_position_usdc]", "80")
    page.click("summary:has-text('Budgets')")
    page.fill("input[name=daily_budget_usdc]", "40")
    page.click("summary:has-text('Start and market filters')")
    page.fill("input[name=exclude_keywords]", "election, recount")
    page.click("button:has-text('Preview')")
    page.locator("#config-preview").wait_for()
    page.click("button:has-text('Confirm and create')")
    page.wait_for_url(re.compile(r".*/dashboard/configs/[0-9a-f-]{36}$"))
    owners_config = page.url.rsplit("/", 1)[1]

    share = page.locator("#share")
    share.locator("#share-state:has-text('Not shared')").wait_for()
    share.locator("button:has-text('Create link')").click()
    link = page.locator("#share-link")
    link.wait_for()
    url = link.inner_text().strip()
    assert re.search(r"/dashboard/shared/[A-Za-z0-9_-]{43}$", url)
    assert page.locator("#share button[data-copy='#share-link']").count() == 1
    path = url[url.index("/dashboard/shared/"):]

    # The second user, in a browser of their own, is sent to sign in first and comes back.
    reader_context = new_context(browser, live_server)
    reader = reader_context.new_page()
    reader.on("dialog", lambda dialog: dialog.accept())
    reader.goto(path)
    assert "/dashboard/login" in reader.url
    reader_email = sign_in(reader, inbox)
    reader.goto(path)
    rules = reader.locator("#shared-rules")
    rules.wait_for()
    text = reader.locator("main").inner_text()
    assert target in rules.inner_text()
    assert re.search(r"Daily budget\s+40\.00 pUSD", rules.inner_text())
    assert re.search(r"Max position\s+80\.00 pUSD", rules.inner_text())
    assert re.search(r"Never questions containing\s+election, recount", rules.inner_text())
    assert re.search(r"Sizing\s+\u00d70\.5 of the trader's size", rules.inner_text())
    assert "results to themselves" in text
    assert owner_email not in text and "My secret label" not in text
    accessible_and_fits_a_phone(reader, "shared-setup")

    reader.click("#use-rules")
    reader.locator("#from-shared").wait_for()
    assert reader.input_value("input[name=target_address]") == target
    assert reader.input_value("input[name=daily_budget_usdc]") == "40"
    assert reader.input_value("input[name=max_position_usdc]") == "80"
    assert reader.input_value("input[name=exclude_keywords]") == "election, recount"
    assert reader.input_value("input[name=target_name]") == ""
    assert reader.is_checked("input[name=paper_trading]")
    reader.fill("input[name=target_name]", "From a friend")
    reader.click("button:has-text('Preview')")
    reader.locator("#config-preview").wait_for()
    reader.click("button:has-text('Confirm and create')")
    reader.wait_for_url(re.compile(r".*/dashboard/configs/[0-9a-f-]{36}$"))
    mine = CopyConfig.get_by_id(reader.url.rsplit("/", 1)[1])
    assert mine.user.email == reader_email and str(mine.id) != owners_config
    assert mine.target_address == target and mine.daily_budget_usdc == Decimal(40)
    assert mine.excluded == ["election", "recount"] and mine.paper_trading
    assert mine.target_name == "From a friend"

    # A new link that shows the owner's results replaces the first one.
    page.reload()
    page.locator("#share #share-state:has-text('rules only')").wait_for()
    page.check("#share input[name=show_results]")
    page.click("#share button:has-text('Make a new link')")
    page.locator("#share-link").wait_for()
    second = page.locator("#share-link").inner_text().strip()
    second_path = second[second.index("/dashboard/shared/"):]
    assert second_path != path
    screenshot(page, "config-share")
    replaced = reader.goto(path)
    assert replaced is not None and replaced.status == 404
    reader.goto(second_path)
    results = reader.locator("#shared-results")
    results.wait_for()
    assert re.search(r"Total\s+0\.00 pUSD", results.inner_text())
    assert "0 copies filled" in results.inner_text()
    assert "paper-trading results" in results.inner_text()
    assert owner_email not in reader.locator("main").inner_text()

    # The owner revokes: the link answers not found from then on.
    page.click("#share button:has-text('Revoke link')")
    page.locator("#share #share-state:has-text('Not shared')").wait_for()
    gone = reader.goto(second_path)
    assert gone is not None and gone.status == 404
    reader_context.close()
    assert User.select().where(User.email.in_([owner_email, reader_email])).count() == 2
