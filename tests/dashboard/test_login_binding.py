"""Issue 18, findings 6 and 11 on the dashboard (Flask test client): a sign-in link
signs in without a question only in the browser that asked for it; anyone else's link
names its account and never follows ``next``; sign-out ends the session on the server,
so a copied cookie is worthless afterwards; moving money, and connecting an account, asks
for a fresh code."""

from __future__ import annotations

import logging
import re

from models import User
from services.identity import auth
from services.wallets import trading_accounts, wallets
from tests.dashboard.conftest import accessible_and_fits_a_phone, screenshot
from venue.accounts import uups_deposit_wallet_address
from venue.signing import OrderKey

ATTACKER = "attacker@example.com"
CONSENT = "/oauth/authorize?client_id=https%3A%2F%2Fevil.example%2Fagent"


def _csrf(client) -> str:
    page = client.get("/dashboard/login").get_data(as_text=True)
    return re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)


def _post(client, path: str, data: dict):
    return client.post(path, data=data, headers={"X-CSRF-Token": _csrf(client)})


def _signed_in_as(client) -> str | None:
    page = client.get("/dashboard/keys")
    if page.status_code != 200:
        return None
    return re.search(r'class="who[^"]*">([^<]+)<', page.get_data(as_text=True)).group(1)


def test_an_attackers_link_names_the_account_and_drops_next(app, client, inbox, bound_db):
    # The attacker asks for a link to their own account (no browser of the victim's).
    auth.request_login(ATTACKER)
    _code, token = inbox.last_for(ATTACKER)
    page = client.get(f"/dashboard/login?token={token}&next={CONSENT}")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert f"Sign in as {ATTACKER}" in html and "not requested from this browser" in html
    assert "oauth/authorize" not in html
    # A plain "Continue" (the form without the account confirmed) does not sign in.
    refused = _post(client, "/dashboard/login/link", {"token": token, "next": CONSENT})
    assert refused.status_code == 400
    assert _signed_in_as(client) is None
    # Confirmed, it signs in, but lands on the home page, never the OAuth consent.
    confirmed = _post(client, "/dashboard/login/link",
                      {"token": token, "account": ATTACKER, "next": CONSENT})
    assert confirmed.status_code == 303
    assert confirmed.headers["Location"] == "/dashboard"


def test_the_browser_that_asked_follows_next_without_a_question(client, inbox, bound_db):
    email = "asker@example.com"
    assert _post(client, "/dashboard/login", {"email": email}).status_code == 200
    _code, token = inbox.last_for(email)
    html = client.get(f"/dashboard/login?token={token}&next=/dashboard/keys"
                      ).get_data(as_text=True)
    assert "Continue" in html and "not requested from this browser" not in html
    done = _post(client, "/dashboard/login/link", {"token": token, "next": "/dashboard/keys"})
    assert done.status_code == 303 and done.headers["Location"] == "/dashboard/keys"
    assert _signed_in_as(client) == email


def _sign_in_with_code(client, inbox, email: str) -> None:
    _post(client, "/dashboard/login", {"email": email})
    code, _ = inbox.last_for(email)
    assert _post(client, "/dashboard/login/verify", {"email": email, "code": code}
                 ).status_code == 303


def test_a_copied_cookie_dies_with_sign_out(app, client, inbox, bound_db):
    email = "cookie@example.com"
    _sign_in_with_code(client, inbox, email)
    stolen = client.get_cookie("session").value
    assert _post(client, "/dashboard/logout", {}).status_code == 303
    thief = app.test_client()
    thief.set_cookie("session", stolen)
    assert thief.get("/dashboard/keys").status_code == 303  # to the sign-in page


def test_end_all_sessions_signs_out_other_browsers(app, client, inbox, bound_db):
    email = "all@example.com"
    _sign_in_with_code(client, inbox, email)
    other = app.test_client()
    _sign_in_with_code(other, inbox, email)
    assert _signed_in_as(other) == email
    assert _post(client, "/dashboard/logout/everywhere", {}).status_code == 303
    assert _signed_in_as(client) is None and _signed_in_as(other) is None


def test_a_money_key_needs_the_emailed_code(client, inbox, bound_db):
    email = "dash-minter@example.com"
    _sign_in_with_code(client, inbox, email)
    form = {"name": "mover", "scopes": ["wallet:write"], "expires_in_days": "30"}
    refused = _post(client, "/dashboard/keys", form)
    assert refused.status_code == 403
    assert _post(client, "/dashboard/step-up", {}).status_code == 200
    code = re.search(r"confirmation code is (\d{6})",
                     inbox.messages[-1][1].get_content()).group(1)
    minted = _post(client, "/dashboard/keys", {**form, "step_up_code": code})
    assert minted.status_code == 200 and "svck_live_" in minted.get_data(as_text=True)


def test_connecting_an_account_needs_the_emailed_code(client, inbox, bound_db):
    """Issue 26: a stolen cookie alone must not connect the thief's key and wallet."""
    email = "dash-connector@example.com"
    _sign_in_with_code(client, inbox, email)
    key = "0x" + "52" * 32
    form = {"wallet_address": uups_deposit_wallet_address(OrderKey(key).address,
                                                          trading_accounts.contracts()),
            "private_key": key}
    refused = _post(client, "/dashboard/account/connect", form)
    assert refused.status_code == 403
    assert "confirmation code" in refused.get_data(as_text=True)
    user = User.get(User.email == email)
    assert wallets.for_user(user) is None
    assert _post(client, "/dashboard/step-up", {}).status_code == 200
    code = re.search(r"confirmation code is (\d{6})",
                     inbox.messages[-1][1].get_content()).group(1)
    connected = _post(client, "/dashboard/account/connect", {**form, "step_up_code": code})
    assert connected.status_code == 200, connected.get_data(as_text=True)
    assert wallets.for_user(user).funder_address == form["wallet_address"]


def test_in_a_browser_someone_elses_link_asks_first(app, page, inbox, bound_db):
    auth.request_login(ATTACKER)
    _code, token = inbox.last_for(ATTACKER)
    page.goto(f"/dashboard/login?token={token}&next={CONSENT}")
    button = page.locator(f"button:has-text('Sign in as {ATTACKER}')")
    button.wait_for()
    assert page.locator("button:has-text('Continue')").count() == 0
    screenshot(page, "login-foreign-link")
    accessible_and_fits_a_phone(page, "login-foreign-link")
    button.click()
    page.wait_for_url(re.compile(r".*/dashboard$"))
    assert page.locator(".who").inner_text() == ATTACKER


def test_the_terminal_says_what_a_confirmation_code_is_for(client, inbox, set_settings,
                                                          caplog, bound_db):
    """No mail server: the sign-in line stays as it was, and a step-up's line names the
    money it confirms (not "sign-in code … for a step-up")."""
    email = "terminal@example.com"
    _sign_in_with_code(client, inbox, email)
    set_settings(smtp_url=None)
    to = "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01"
    with caplog.at_level(logging.WARNING, logger="services.identity.auth"):
        # (no chain here: the confirmation's page answers 501 once the code is sent)
        _post(client, "/dashboard/wallet/withdraw/confirm",
              {"to_address": to, "amount": "12.5", "token": "usdc"})
        assert _post(client, "/dashboard/login", {"email": email}).status_code == 200
    step_up, sign_in = [r.getMessage() for r in caplog.records
                        if r.name == "services.identity.auth"]
    code = re.fullmatch(rf"SMTP_URL is not set; confirmation code for {email}, for a "
                        r"withdrawal of 12\.50 pUSD to 0xAbCd…Ef01: (\d{6})", step_up)
    assert code, step_up
    assert re.fullmatch(rf"SMTP_URL is not set; sign-in code for {email}: \d{{6}} \(link: "
                        r"\S+/dashboard/login\?token=\S+\)", sign_in), sign_in
    # The logged code is the step-up's own: it mints a key that can move money.
    minted = _post(client, "/dashboard/keys", {"name": "mover", "scopes": ["wallet:write"],
                                               "expires_in_days": "30",
                                               "step_up_code": code.group(1)})
    assert minted.status_code == 200 and "svck_live_" in minted.get_data(as_text=True)
