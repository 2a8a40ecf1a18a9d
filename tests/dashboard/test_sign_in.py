"""Sign-in in a real browser: the emailed code and the one-time link, the cookie, sign-out,
CSRF on every unsafe request, and errors shown inline with the API's codes."""

from __future__ import annotations

import re
import secrets

import httpx

from tests.dashboard.conftest import screenshot, sign_in


def _sign_in_through_the_form(page, inbox) -> str:
    """Sign in as a person does: type the address, then the emailed code; the address."""
    email = f"{secrets.token_hex(5)}@example.com"
    page.goto("/dashboard/login")
    page.fill("input[name=email]", email)
    page.click("button:has-text('Send me a code')")
    page.wait_for_selector("input[name=code]")
    code, _token = inbox.last_for(email)
    page.fill("input[name=code]", code)
    page.click("button:has-text('Sign in')")
    page.wait_for_url(re.compile(r".*/dashboard$"))
    return email


def test_sign_in_with_the_emailed_code_then_sign_out(page, inbox, live_server):
    page.goto("/")
    page.wait_for_url(re.compile(r".*/dashboard/login\?next=.*"))
    screenshot(page, "login")
    email = _sign_in_through_the_form(page, inbox)
    assert page.locator(".who").inner_text() == email
    [cookie] = [c for c in page.context.cookies() if c["name"] == "session"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and not cookie["secure"]
    screenshot(page, "configs-empty")

    page.click("#menu summary")  # signing out is in the header's menu
    page.click("#menu button:has-text('Sign out')")
    page.wait_for_url(re.compile(r".*/dashboard/login$"))
    page.goto("/dashboard/keys")
    page.wait_for_url(re.compile(r".*/dashboard/login\?next=/dashboard/keys$"))


def test_sign_in_with_the_emailed_link_returns_to_the_page_asked_for(page, inbox):
    email = "link-user@example.com"
    page.goto("/dashboard/keys")
    page.wait_for_url(re.compile(r".*next=/dashboard/keys$"))
    page.fill("input[name=email]", email)
    page.click("button:has-text('Send me a code')")
    page.wait_for_selector("input[name=code]")
    _code, token = inbox.last_for(email)
    # The emailed link, opened in the same browser; a button redeems it (scanners that
    # prefetch links cannot spend it).
    page.goto(f"/dashboard/login?token={token}&next=/dashboard/keys")
    page.click("button:has-text('Continue')")
    page.wait_for_url(re.compile(r".*/dashboard/keys$"))
    assert page.locator(".who").inner_text() == email

    # The link works once. The signed-in page is left first: its polls, refused once the
    # cookies are gone, would send it to the sign-in page across the next navigation.
    page.goto("about:blank")
    page.context.clear_cookies()
    page.goto(f"/dashboard/login?token={token}")
    page.click("button:has-text('Continue')")
    alert = page.locator("#login-errors .alert")
    alert.wait_for()
    assert alert.get_attribute("data-code") == "invalid_token"


def test_a_wrong_code_is_refused_inline_with_the_api_code(page, inbox):
    page.goto("/dashboard/login")
    page.fill("input[name=email]", "wrong-code@example.com")
    page.click("button:has-text('Send me a code')")
    page.wait_for_selector("input[name=code]")
    code, _ = inbox.last_for("wrong-code@example.com")
    page.fill("input[name=code]", "000000" if code != "000000" else "111111")
    page.click("button:has-text('Sign in')")
    alert = page.locator("#login-errors .alert")
    alert.wait_for()
    assert alert.get_attribute("data-code") == "invalid_token"
    assert "/dashboard/login" in page.url


def test_unsafe_requests_without_the_csrf_token_are_refused(page, inbox, live_server):
    sign_in(page, inbox)
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    with httpx.Client(base_url=live_server, cookies=cookies) as http:
        refused = http.post("/dashboard/keys", data={"name": "x", "scopes": "read:account"})
        assert refused.status_code == 403 and "CSRF" in refused.text
        forged = http.post("/dashboard/keys", data={"name": "x", "scopes": "read:account"},
                           headers={"X-CSRF-Token": "forged", "HX-Request": "true"})
        assert forged.status_code == 403
        assert 'data-code="bad_request"' in forged.text
        # The token the page carries is accepted.
        page.goto("/dashboard/keys")
        token = page.locator("meta[name=csrf-token]").get_attribute("content")
        accepted = http.post("/dashboard/keys", data={"name": "x", "scopes": "read:account"},
                             headers={"X-CSRF-Token": token, "HX-Request": "true"})
        assert accepted.status_code == 200 and "svck_live_" in accepted.text
    # Signing out needs the token too (no cross-site sign-out).
    with httpx.Client(base_url=live_server, cookies=cookies) as http:
        assert http.post("/dashboard/logout").status_code == 403


def test_pages_need_a_session(live_server):
    with httpx.Client(base_url=live_server) as http:
        page = http.get("/dashboard/wallet")
        assert page.status_code == 303
        assert page.headers["Location"] == "/dashboard/login?next=/dashboard/wallet"
        fragment = http.get("/dashboard/configs", headers={"HX-Request": "true"})
        assert fragment.headers["HX-Redirect"].startswith("/dashboard/login")


def test_without_a_mail_server_the_pages_say_the_code_is_in_the_servers_log(
        page, live_server, set_settings, caplog):
    set_settings(smtp_url=None)
    email = "no-mail@example.com"
    page.goto("/dashboard/login")
    said = page.locator("#no-mail").inner_text()
    # named as a person started it: `make run` (the README's way) or `copytrade up`
    assert "appear in the server's log" in said and "make run" in said and "copytrade up" in said
    page.fill("input[name=email]", email)
    with caplog.at_level("WARNING", logger="services.identity.auth"):
        page.click("button:has-text('Send me a code')")
        page.wait_for_selector("input[name=code]")
    assert page.locator("h1").inner_text() == "Find your code in the server's log"
    screenshot(page, "login-no-mail")
    [notice] = [r.getMessage() for r in caplog.records if "sign-in code for" in r.getMessage()]
    code = re.search(r"sign-in code for \S+: (\d{6})", notice).group(1)
    page.fill("input[name=code]", code)
    page.click("button:has-text('Sign in')")
    page.wait_for_url(re.compile(r".*/dashboard$"))
