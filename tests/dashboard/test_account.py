"""The account page: a new user's deposit wallet, made and set up from their first sign-in,
followed step by step until "ready" (the real onboarding job, on a real worker, against the
sandbox relayer), with connecting an account of their own still offered meanwhile."""

from __future__ import annotations

import secrets

from models import User
from services.wallets import wallets
from tests.api.test_sessions import confirmation_code
from tests.conftest import DEADLINE
from tests.dashboard.conftest import screenshot, sign_in


def test_a_new_user_follows_onboarding_until_ready(page, inbox, worker_host,
                                                  venue_control) -> None:
    venue_control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    email = sign_in(page, inbox)
    page.goto("/dashboard/account")
    # The sign-in started the set-up: no button to press, the page follows it.
    assert page.locator("#onboarding[data-status=failed]").count() == 0
    assert page.locator("#onboarding:has-text('Deposit wallet')").count() == 1
    # The connect form refuses a key that does not control the wallet, naming the field
    # (past the fresh emailed code connecting asks for: deposits would go to the wallet).
    connect = page.locator("form[hx-post='/dashboard/account/connect']")
    connect.locator("input[name=wallet_address]").fill("0x" + "ab" * 20)
    connect.locator("input[name=private_key]").fill("42" * 32)
    connect.locator("button:has-text('Send me a code')").click()
    page.wait_for_selector("#connect-step-up-sent [data-code-where=mail]")
    connect.locator("input[name=step_up_code]").fill(confirmation_code(inbox, email))
    page.click("button:has-text('Connect')")
    alert = page.locator("#connect-errors .alert")
    alert.wait_for()
    assert alert.get_attribute("data-code") == "validation_failed"
    assert alert.locator("[data-field=private_key]").count() == 1

    page.wait_for_selector("#onboarding[data-status=ready]", timeout=DEADLINE * 1000)
    assert page.locator("button:has-text('Set up my account')").count() == 0
    # "signature type 3" is explained where it is shown
    kind = page.locator("#onboarding abbr.term")
    assert kind.inner_text() == "signature type 3" and "deposit wallet" in kind.get_attribute(
        "title")
    states = page.locator("#onboarding li").evaluate_all(
        "items => items.map(i => i.dataset.state)")
    assert states == ["done"] * 4
    wallet = wallets.for_user(User.get(User.email == email))
    assert wallet.funder_address in page.locator("#onboarding").inner_text()
    screenshot(page, "account-ready")


def test_a_plain_eoa_not_allowlisted_sees_the_venues_refusal(page, inbox,
                                                            venue_control) -> None:
    from services.platform import runtime
    from services.wallets import trading_accounts
    from tests.wallet_fixtures import allow_eoa_operator
    from venue.signing import OrderKey

    email = sign_in(page, inbox)
    # A plain EOA (type 0) connected while allowlisted, then taken off the operator's list.
    previous = runtime.runtime()
    key = OrderKey("0x" + secrets.token_hex(32))
    allow_eoa_operator(key.address)
    trading_accounts.connect(User.get(User.email == email), wallet_address=key.address,
                             private_key=key.private_key)
    runtime.install(previous)
    venue_control.fund(key.address, "50")
    page.goto("/dashboard/account/readiness")
    blocker = page.locator("li[data-code=eoa_not_allowlisted]")
    assert blocker.count() == 1
    assert trading_accounts.EOA_REFUSED in blocker.inner_text()


def test_without_a_mail_server_the_step_up_says_the_code_is_in_the_log(
        page, inbox, set_settings) -> None:
    sign_in(page, inbox)
    set_settings(smtp_url=None)  # a laptop run: codes go to the server's log
    page.goto("/dashboard/keys")
    # A money key without a code is refused in the dashboard's words, not the API's.
    page.fill("input[name=name]", "mover")
    page.check("input[name=scopes][value='wallet:write']")
    page.click("button:has-text('Create key')")
    alert = page.locator("#key-errors .alert")
    alert.wait_for()
    assert alert.get_attribute("data-code") == "scope_required"
    assert "Send me a code" in alert.inner_text() and "/api/" not in alert.inner_text()
    page.click("button:has-text('Send me a code')")
    where = page.locator("#key-step-up-sent [data-code-where=log]")
    where.wait_for()
    assert "SMTP_URL" in where.inner_text() and "terminal" in where.inner_text()
    # the command the newcomer ran, as the sign-in page names it
    assert "make run" in where.inner_text()
