"""Positions, trades and open orders (live and paper), and approved OAuth apps, in a browser."""

from __future__ import annotations

import secrets
from decimal import Decimal

from playwright.sync_api import expect

from models import User
from models.oauth import Approval
from services.trading import order_reads, orders, paper, previews
from tests.dashboard.conftest import (
    accessible_and_fits_a_phone,
    approved_app,
    screenshot,
    sign_in,
)
from tests.trading_support import onboarded_trader


def test_positions_trades_and_cancelling_an_open_order(page, inbox, venue_control):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    onboarded_trader(user, "200", venue_control)  # a new user's deposit wallet, set up
    slug = f"dash-pos-{secrets.token_hex(4)}"
    market = venue_control.add_market(slug, liquidity=True, fair_price="0.5",
                                      category="politics")
    yes, no = market["token_ids"]
    # A live fill, a resting limit order, and a paper fill, through the trading services.
    quote = previews.create(user, token_id=yes, side="buy", size=Decimal(10),
                            order_type="market")
    orders.place_order(user, source="manual", token_id=yes, side="buy", size=Decimal(10),
                       order_type="market", preview_id=quote["preview_id"])
    quote = previews.create(user, token_id=no, side="buy", size=Decimal(10),
                            price=Decimal("0.2"), order_type="limit")
    resting = orders.place_order(user, source="manual", token_id=no, side="buy",
                                 size=Decimal(10), price=Decimal("0.2"), order_type="limit",
                                 preview_id=quote["preview_id"])
    paper.fill(user, yes, "BUY", Decimal(4))

    page.goto("/dashboard/positions")
    live = page.locator(f"#live-positions tr[data-token-id='{yes}']")
    live.wait_for()
    assert "10" in live.inner_text()
    page.locator(f"#paper-positions tr[data-token-id='{yes}']").wait_for()
    page.wait_for_selector("#live-trades td:has-text('filled')")
    # Matched just now: the venue has not confirmed it on chain yet, and the table says so.
    page.wait_for_selector("#live-trades td:has-text('settlement matched')")
    page.wait_for_selector("#paper-trades td:has-text('filled')")
    order_row = page.locator(f"#open-orders tr[data-order-id='{resting.order_hash}']")
    order_row.wait_for()
    screenshot(page, "positions")
    screenshot(page, "positions-phone", phone=True)

    order_row.locator("button:has-text('Cancel')").click()  # confirm: yes
    page.wait_for_selector(f"#open-orders:has-text('Cancelled: {resting.order_hash}')")
    assert page.locator(f"#open-orders tr[data-order-id='{resting.order_hash}']").count() == 0
    assert order_reads.open_orders(user) == []


def test_approved_apps_are_listed_and_revoked(page, inbox, app):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    client = approved_app(user, "Research agent", ["read:account", "read:trades"])

    page.goto("/dashboard/apps")
    row = page.locator("tr", has_text="Research agent")
    row.wait_for()
    assert "read:trades" in row.inner_text()
    screenshot(page, "apps")
    row.locator("button:has-text('Revoke')").click()  # confirm: yes
    page.wait_for_selector("#apps:has-text('No apps approved.')")
    assert Approval.get(Approval.client == client.id).revoked_at is not None


def test_oauth_consent_signs_in_on_the_dashboard_and_renders_in_its_layout(page, inbox, app):
    from urllib.parse import parse_qs, urlencode, urlsplit

    from tests.api.oauth_flow import REDIRECT_URI, authorize_params, pkce, register

    registration = register(app.test_client(), client_name="Consent agent")
    _, challenge = pkce()
    params = authorize_params(registration["client_id"], challenge)
    authorize = "/oauth/authorize?" + urlencode(params)
    refused: list[str] = []  # what the pages' Content-Security-Policy blocked, if anything
    page.on("console", lambda message: refused.append(message.text)
            if "Content Security Policy" in message.text else None)
    callbacks: list[str] = []

    def client_callback(route):
        callbacks.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<p>back at the client</p>")

    page.route(REDIRECT_URI + "**", client_callback)

    # Signed out, the authorization request lands on the dashboard's sign-in page ...
    page.goto(authorize)
    page.wait_for_selector("input[name=email]")
    assert urlsplit(page.url).path == "/dashboard/login"
    page.fill("input[name=email]", "consent@example.com")
    page.click("button:has-text('Send me a code')")
    page.wait_for_selector("input[name=code]")
    code, _ = inbox.last_for("consent@example.com")
    page.fill("input[name=code]", code)
    page.click("button:has-text('Sign in')")
    # ... and signing in there goes back to the consent page, in the dashboard's layout.
    page.wait_for_selector("#consent")
    assert "/oauth/authorize" in page.url and "Consent agent" in page.content()
    assert page.locator(".topbar .who").inner_text() == "consent@example.com"
    # dashboard.css applied under the page's CSP (awaited: the element can come before
    # the stylesheet does)
    expect(page.locator(".topbar")).to_have_css("background-color", "rgb(17, 24, 39)")
    assert page.evaluate("typeof htmx") == "object"
    screenshot(page, "oauth-consent")
    accessible_and_fits_a_phone(page, "oauth-consent")

    # Allowing sends the browser to the client's redirect URI with the code.
    page.click("button:has-text('Allow')")
    page.wait_for_selector("text=back at the client")
    [callback] = callbacks
    back = parse_qs(urlsplit(callback).query)
    assert back["code"] and back["state"] == [params["state"]]

    # The error page for a request that cannot go back to any client: same layout.
    page.goto("/oauth/authorize?" + urlencode({**params, "client_id": "no-such-client"}))
    page.wait_for_selector("#oauth-error .alert")
    assert page.eval_on_selector(".topbar", "e => getComputedStyle(e).backgroundColor") == (
        "rgb(17, 24, 39)")
    assert refused == []
