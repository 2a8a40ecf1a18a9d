"""The forms that change a config or move money work without JavaScript (issue 42): posted
as plain forms, answered with a page (a 303 to it once done), in a browser whose
JavaScript is off, signed in with the session of one whose JavaScript is on."""

from __future__ import annotations

import re
import secrets
from decimal import Decimal

from chain.keys import generate_keypair
from models import User
from models.copying import CopyConfig
from models.wallet import Withdrawal
from tests.api.test_sessions import confirmation_code
from tests.dashboard.conftest import new_context, sign_in
from tests.trading_support import onboarded_trader
from tests.wallet_fixtures import ONE_MATIC, USDC, legacy_eoa_wallet


def test_the_config_and_order_forms_post_without_javascript(
        page, browser, live_server, inbox, venue_control):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    onboarded_trader(user, "200", venue_control)
    config = CopyConfig.create(user=user.id, target_address="0x" + secrets.token_hex(20),
                               target_name="No-script whale", size_multiplier=Decimal("0.5"),
                               max_position_usdc=Decimal(100), price_deviation_bps=200,
                               paper_trading=True, is_active=False, blocked_categories="[]")
    slug = f"dash-nojs-{secrets.token_hex(4)}"
    venue_control.add_market(slug, liquidity=True, fair_price="0.5",
                             question=f"Will the no-script test {slug} pass?")
    context = new_context(browser, live_server, java_script_enabled=False)
    context.add_cookies(page.context.cookies())
    plain = context.new_page()
    try:
        plain.goto(f"/dashboard/configs/{config.id}/edit")
        assert plain.locator("script").count() > 0  # the page has scripts; none ran
        plain.fill("input[name=max_position_usdc]", "321")
        plain.click("button:has-text('Save')")
        plain.wait_for_url(re.compile(rf".*/dashboard/configs/{config.id}$"))
        assert CopyConfig.get_by_id(config.id).max_position_usdc == Decimal(321)

        plain.goto(f"/dashboard/markets/{slug}")
        plain.fill("#ticket input[name=size]", "10")
        plain.click("#ticket button:has-text('Preview')")
        plain.wait_for_selector("#order-preview")  # the market's page, the preview in place
        assert re.search(r"Cost\s+\d+\.\d{2} pUSD", plain.locator("#order-preview").inner_text())
        plain.click("#order-preview button:has-text('Place order')")
        plain.wait_for_url(re.compile(rf".*/dashboard/markets/{slug}\?.*order=0x.*"))
        assert plain.locator("#order-placed").get_attribute("data-status") == "filled"
        assert re.match(r"10\.00 Yes shares", plain.locator("#held").inner_text())
    finally:
        context.close()


def test_a_withdrawal_posts_without_javascript(page, browser, live_server, inbox, fund,
                                               wallet_chain):
    email = sign_in(page, inbox)
    wallet = legacy_eoa_wallet(User.get(User.email == email))  # pays its own gas
    fund(wallet.address, pusd=5 * USDC, matic_wei=ONE_MATIC)
    context = new_context(browser, live_server, java_script_enabled=False)
    context.add_cookies(page.context.cookies())
    plain = context.new_page()
    try:
        plain.goto("/dashboard/wallet")
        to = generate_keypair().address
        plain.fill("input[name=to_address]", to)
        plain.fill("input[name=amount]", "1")
        plain.click("button:has-text('Review withdrawal')")
        confirm = plain.locator("#withdraw-confirm")  # the wallet's page, confirming
        confirm.wait_for()
        assert "1 pUSD" in confirm.inner_text()
        plain.fill("input[name=step_up_code]", confirmation_code(inbox, email))
        plain.click("button:has-text('Confirm withdrawal')")
        plain.wait_for_url(re.compile(r".*/dashboard/wallet\?withdrawal=.*"))
        [sent] = Withdrawal.select().where(Withdrawal.user == wallet.user)
        assert (sent.to_address.lower(), sent.amount) == (to.lower(), Decimal(1))
        # the page shows where it stands (a reload follows it; nothing polls without script)
        assert plain.locator(f"#withdrawal-{sent.id}").get_attribute("data-status")
    finally:
        context.close()
