"""The forms that change a config or move money work without JavaScript (issue 42): posted
as plain forms, answered with a page (a 303 to it once done), in a browser whose
JavaScript is off, signed in with the session of one whose JavaScript is on."""

from __future__ import annotations

import re
import secrets
import time
from decimal import Decimal

from chain.keys import generate_keypair
from chain.tokens import token_balance_base
from models import User
from models.copying import CopyConfig
from models.wallet import Claim, CollateralWrap, Withdrawal
from services.wallets import onboarding, wallets
from tests.api.test_sessions import confirmation_code
from tests.chain_venue import chain_venue, run_queued_jobs  # noqa: F401 - the wrap's venue
from tests.conftest import DEADLINE
from tests.dashboard.conftest import new_context, sign_in
from tests.services.wallets.test_relayer_claims_chain import holding_winners
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
        assert "1.00 pUSD" in confirm.inner_text()
        plain.fill("input[name=step_up_code]", confirmation_code(inbox, email))
        plain.click("button:has-text('Confirm withdrawal')")
        plain.wait_for_url(re.compile(r".*/dashboard/wallet\?withdrawal=.*"))
        [sent] = Withdrawal.select().where(Withdrawal.user == wallet.user)
        assert (sent.to_address.lower(), sent.amount) == (to.lower(), Decimal(1))
        # the page shows where it stands (a reload follows it; nothing polls without script)
        assert plain.locator(f"#withdrawal-{sent.id}").get_attribute("data-status")
    finally:
        context.close()


def _reload_until(plain, selector: str, status: str, deadline: float) -> None:
    """Reload ``plain`` until ``selector`` shows ``status``: nothing polls without script."""
    while plain.locator(selector).get_attribute("data-status") != status:
        assert time.monotonic() < deadline, plain.locator(selector).get_attribute("data-status")
        time.sleep(0.2)
        plain.reload()


def _plain_page(page, browser, live_server):
    """A page in a browser whose JavaScript is off, signed in with ``page``'s session."""
    context = new_context(browser, live_server, java_script_enabled=False)
    context.add_cookies(page.context.cookies())
    return context, context.new_page()


def test_a_config_is_previewed_and_created_without_javascript(page, browser, live_server,
                                                              inbox, venue_control):
    email = sign_in(page, inbox)
    target = generate_keypair().address.lower()
    context, plain = _plain_page(page, browser, live_server)
    try:
        plain.goto("/dashboard/configs/new")
        assert plain.locator("script").count() > 0  # the page has scripts; none ran
        plain.fill("input[name=target_address]", target)
        plain.fill("input[name=target_name]", "No-script whale")
        plain.fill("input[name=size_multiplier]", "0.5")
        plain.fill("input[name=max_position_usdc]", "100")
        plain.click("button:has-text('Preview')")
        preview = plain.locator("#config-preview")  # the form's page, the preview below
        preview.wait_for()
        assert re.search(r"Max position\s+100\.00 pUSD", preview.inner_text())
        assert plain.input_value("input[name=target_name]") == "No-script whale"
        assert not CopyConfig.select().where(CopyConfig.target_address == target).exists()
        plain.click("button:has-text('Confirm and create')")
        plain.wait_for_url(re.compile(r".*/dashboard/configs/[0-9a-f-]{36}$"))
        [created] = CopyConfig.select().where(CopyConfig.target_address == target)
        assert plain.url.endswith(str(created.id))
        assert (created.user.email, created.target_name) == (email, "No-script whale")
        assert (created.size_multiplier, created.max_position_usdc) == (Decimal("0.5"), 100)
        assert created.paper_trading and not created.is_active  # created stopped, on paper
    finally:
        context.close()


def test_a_form_without_its_csrf_token_is_refused(page, browser, live_server, inbox):
    """The plain forms carry the session's CSRF token as a field: without it, a post from
    elsewhere is refused and creates nothing."""
    sign_in(page, inbox)
    context, plain = _plain_page(page, browser, live_server)
    try:
        plain.goto("/dashboard/configs/new")
        plain.locator("#config-form input[name=csrf_token]").evaluate(
            "input => input.remove()")
        plain.fill("input[name=target_address]", generate_keypair().address.lower())
        plain.fill("input[name=size_multiplier]", "0.5")
        plain.fill("input[name=max_position_usdc]", "100")
        plain.click("button:has-text('Preview')")
        plain.wait_for_load_state()
        assert "CSRF check failed" in plain.content()
        assert plain.locator("#config-preview").count() == 0
    finally:
        context.close()


def test_claims_post_without_javascript(page, browser, live_server, inbox, job_prefix,
                                        accounts_venue, user):
    _wallet, _maker, condition = holding_winners(accounts_venue, user, 6)  # 6 Yes; Yes won
    sign_in(page, inbox, user.email)
    context, plain = _plain_page(page, browser, live_server)
    try:
        plain.goto("/dashboard/wallet")
        plain.click("a:has-text('Show the resolved positions to claim')")
        form = plain.locator("#claimable form")
        form.wait_for()
        assert form.locator(f"input[value='{condition.token_ids[0]}']").is_checked()
        # The request waits a while for the claim's job: answer it as a worker would.
        plain.click("button:has-text('Claim selected')", no_wait_after=True)
        deadline = time.monotonic() + DEADLINE
        while "claims.redeem" not in run_queued_jobs(only={"claims.redeem"}):
            assert time.monotonic() < deadline, "the claim was never queued"
            time.sleep(0.1)
        plain.wait_for_url(re.compile(r".*/dashboard/wallet\?claims=.*"))
        [sent] = Claim.select().where(Claim.user == user.id)
        assert str(sent.id) in plain.url
        _reload_until(plain, f"#claim-{sent.id}", "confirmed", deadline)
        assert "pays 6.00" in plain.locator(f"#claim-{sent.id}").inner_text()
        assert Claim.get_by_id(sent.id).status == "confirmed"
    finally:
        context.close()


def test_a_wrap_posts_without_javascript(
        page, browser, live_server, inbox, chain_venue, worker_host, chain):  # noqa: F811
    dev = chain.contracts
    email = sign_in(page, inbox)  # the sign-in starts the account's setup; the worker runs it
    wallet = wallets.for_user(User.get(User.email == email))
    deadline = time.monotonic() + DEADLINE
    while onboarding.status(wallet.user_id)["status"] != "ready":
        assert time.monotonic() < deadline, onboarding.status(wallet.user_id)
        time.sleep(0.2)
    dev.mint(dev.usdce, wallet.funder_address, USDC // 2)  # under the watcher's minimum
    context, plain = _plain_page(page, browser, live_server)
    try:
        plain.goto("/dashboard/account")
        plain.click("a:has-text('Check for USDC.e to wrap')")
        offered = plain.locator("#wrap [data-usdc-e]")
        offered.wait_for()
        assert offered.get_attribute("data-usdc-e") == "0.5"
        plain.click("#wrap button:has-text('Wrap 0.5 USDC.e into pUSD')")
        plain.wait_for_url(re.compile(r".*/dashboard/account/wraps/[0-9a-f-]{36}$"))
        [sent] = CollateralWrap.select().where(CollateralWrap.wallet == wallet.id)
        assert plain.url.endswith(str(sent.id)) and sent.amount == Decimal("0.5")
        _reload_until(plain, "#wrap", "confirmed", deadline)
        assert token_balance_base(chain.web3(), dev.pusd, wallet.funder_address) == USDC // 2
    finally:
        context.close()
