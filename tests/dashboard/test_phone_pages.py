"""Every dashboard page not covered with the trader's pages, filled with realistic rows, at
desktop and phone width: axe-core finds no serious or critical violation, a phone never
scrolls sideways and its tables are stacked rows; on a wide screen the config page's
decisions table gives each column its width (nothing squeezed or cut)."""

from __future__ import annotations

import json
import secrets
from datetime import timedelta
from decimal import Decimal
from typing import Any

from models import User
from models.base import utcnow
from models.copying import CopyConfig, CopyIntent
from models.oauth import OAuthClient
from services.notifications import events
from services.oauth import tokens as oauth
from tests.dashboard.conftest import DESKTOP, accessible_and_fits_a_phone, sign_in
from tests.trading_support import onboarded_trader

LONG_SLUG = "will-the-federal-reserve-cut-interest-rates-by-50-basis-points-in-december-2026"


def _config_with_decisions(user: User) -> CopyConfig:
    """A config with a copied trade, a failure and skips whose reasons carry long details."""
    config = CopyConfig.create(user=user.id, target_address="0x" + secrets.token_hex(20),
                               target_name="Long-horizon macro whale",
                               size_multiplier=Decimal("0.25"),
                               max_position_usdc=Decimal(250), daily_budget_usdc=Decimal(40),
                               price_deviation_bps=300, paper_trading=True, is_active=False,
                               blocked_categories=json.dumps(["sports"]))
    # a copy by each detection source, with the slippage it paid; skips have neither
    rows = [("filled", None, "", "BUY", "1250.5", "0.634"),
            ("skipped", "price_deviation",
             "The book's 0.71 is 12.30 % from the trader's fill at 0.63; the price deviation "
             "allows 3 %.",
             "BUY", "40", "0.634"),
            ("skipped", "daily_budget_exhausted",
             "Today's copies spent 39.87 of 40.00 pUSD; this one needs 12.68.", "SELL", "20",
             "0.5"),
            ("failed", "insufficient_balance", "Balance 0.50 pUSD cannot buy 5 shares.",
             "BUY", "5", "0.99")]
    execution = [("chain", "-12.5"), (None, None), (None, None), ("poll", None)]
    for n, (status, reason, detail, side, size, price) in enumerate(rows):
        at = utcnow() - timedelta(minutes=10 * n)
        filled = status == "filled"
        source, slippage = execution[n]
        CopyIntent.create(config=config.id, user_id=user.id, target_trade_key=f"t{n}",
                          target_address=config.target_address,
                          token_id=str(secrets.randbits(128)), market_slug=LONG_SLUG,
                          outcome="Yes", paper=True, status=status, reason=reason,
                          detail=detail, side=side, size=Decimal(size), price=Decimal(price),
                          filled_size=Decimal(size) if filled else None,
                          filled_price=Decimal(price) if filled else None,
                          seen_at=at, settled_at=at if filled else None, created_at=at,
                          detection_source=source, target_price=Decimal(price),
                          slippage_bps=Decimal(slippage) if slippage else None)
    return config


def _squeezed(page: Any, table: str, prose_rem: float) -> list[str]:
    """Cells of ``table`` squeezed: content wider than the cell, a figure or a word column
    broken over lines, a text column narrower than ``prose_rem``; "table" when the table
    is wider than its card (a sideways scroll on a desktop)."""
    return page.evaluate("""([selector, proseRem]) => {
        const table = document.querySelector(selector);
        const wrap = table.closest('.table-wrap') || table.parentElement;
        const rem = parseFloat(getComputedStyle(document.documentElement).fontSize);
        const lines = (cell) => {  // line boxes of the cell's content, a few px apart
            const range = document.createRange();
            range.selectNodeContents(cell);
            const tops = [...range.getClientRects()].map(r => r.top).sort((a, b) => a - b);
            return tops.filter((t, i) => i === 0 || t - tops[i - 1] > 8).length;
        };
        const prose = ['Why', 'Market'];  // text columns may wrap between words
        const bad = [...table.querySelectorAll('tbody td')]
            .filter(c => c.scrollWidth > c.clientWidth + 1
                || (prose.includes(c.dataset.label) ? c.clientWidth < proseRem * rem
                    : lines(c) > 1))
            .map(c => c.dataset.label + ' (' + c.clientWidth + ' px): ' + c.innerText);
        if (wrap.scrollWidth > wrap.clientWidth + 1) {
            bad.push('table ' + wrap.scrollWidth + ' px in ' + wrap.clientWidth + ' px: '
                     + [...table.tHead.rows[0].cells].map(c => c.offsetWidth).join(' '));
        }
        return bad; }""", [table, prose_rem])


def test_signed_out_pages(page, inbox):
    page.goto("/dashboard/login")
    accessible_and_fits_a_phone(page, "login")
    page.fill("input[name=email]", f"{secrets.token_hex(5)}@example.com")
    page.click("button:has-text('Send me a code')")
    page.wait_for_selector("input[name=code]")
    accessible_and_fits_a_phone(page, "login-code")
    page.goto("/dashboard/no-such-page")  # signed out: the sign-in page, then back here
    assert "/dashboard/login" in page.url


def test_account_keys_apps_and_notifications(page, inbox, venue_control):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    page.goto("/dashboard/account")  # before any wallet: the set-up step
    page.wait_for_load_state("networkidle")
    accessible_and_fits_a_phone(page, "account-new")
    onboarded_trader(user, "50", venue_control)
    page.goto("/dashboard/account")
    page.wait_for_load_state("networkidle")
    accessible_and_fits_a_phone(page, "account")

    page.goto("/dashboard/keys")
    page.fill("input[name=name]", "monitoring agent with a long descriptive name")
    page.check("input[value='read:account']")
    page.check("input[value='read:positions']")
    page.click("button:has-text('Create key')")
    page.wait_for_selector("#new-key-secret")
    page.reload()
    page.wait_for_selector("td:has-text('monitoring agent')")
    accessible_and_fits_a_phone(page, "keys")

    client = OAuthClient.create(client_id=f"client-{secrets.token_hex(4)}", kind="registered",
                                client_name="Research agent",
                                redirect_uris='["https://agent.example/cb"]',
                                grant_types="authorization_code refresh_token",
                                response_types="code", token_endpoint_auth_method="none")
    oauth.record_approval(user, client, ["read:account", "read:trades", "trade:paper"])
    page.goto("/dashboard/apps")
    page.wait_for_selector("td:has-text('Research agent')")
    accessible_and_fits_a_phone(page, "apps")

    for n in range(3):
        events.emit(user, "copy.skipped", f"phone-skip:{n}", amount=Decimal(20),
                    reason="price_deviation_exceeded", market=LONG_SLUG, trader="whale",
                    link="/dashboard/configs")
    page.goto("/dashboard/notifications")
    page.wait_for_load_state("networkidle")
    accessible_and_fits_a_phone(page, "notifications")


def test_config_pages_and_the_decisions_table_on_a_wide_screen(page, inbox, venue_control):
    email = sign_in(page, inbox)
    config = _config_with_decisions(User.get(User.email == email))
    page.goto(f"/dashboard/configs/{config.id}")
    page.wait_for_selector("#decisions tr[data-decision]")
    # each copy's detection source and slippage (a failed copy has no slippage; a skip
    # neither), its outcome the intent's status
    rows = page.locator("#decisions tr[data-decision]")
    shown = [(rows.nth(n).get_attribute("data-status"),
              rows.nth(n).locator("td[data-label=Execution]").inner_text())
             for n in range(4)]
    assert shown == [("filled", "chain · -12.5 bps"), ("skipped", "—"), ("skipped", "—"),
                     ("failed", "poll")], shown
    assert rows.first.locator("td[data-label=Outcome]").inner_text() == "filled paper"
    for width, prose_rem in ((DESKTOP["width"], 14), (1024, 10)):
        page.set_viewport_size({"width": width, "height": 900})
        squeezed = _squeezed(page, "#decisions table", prose_rem)
        assert squeezed == [], f"at {width} px: {squeezed}"
    # Narrower, its many columns cannot all fit: the rows stack as on a phone.
    page.set_viewport_size({"width": 800, "height": 900})
    assert page.locator("#decisions thead").is_hidden()
    assert page.evaluate("() => document.scrollingElement.scrollWidth") <= 800
    page.set_viewport_size(DESKTOP)
    accessible_and_fits_a_phone(page, "config-decisions")

    page.goto(f"/dashboard/configs/{config.id}/edit")
    accessible_and_fits_a_phone(page, "config-edit")
    page.goto("/dashboard/configs/new")
    accessible_and_fits_a_phone(page, "config-new")
    page.goto("/dashboard/no-such-page")
    assert page.locator("h1").inner_text() == "Something went wrong"
    accessible_and_fits_a_phone(page, "not-found")
