"""Every dashboard page, walked once with realistic rows, at desktop width and at 390 by 844
(issue 44, item 8): nothing scrolls sideways at either width, the phone's header stays
compact (its pages and signing out are in the menu), and each page is saved as
docs/screenshots/<page>-desktop.png and <page>-phone.png for the docs (and for a person
to look at)."""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import Any

from models import User
from services.copying.configs import sharing
from services.copying.copy_notices import readable
from services.notifications import events
from services.trading import orders, previews
from services.wallets import onboarding, wallets
from tests.dashboard.conftest import DESKTOP, PHONE, docs_screenshot, sign_in
from tests.dashboard.test_phone_pages import LONG_SLUG, _config_with_decisions
from tests.services.wallets.test_relayer_claims_chain import _onboarded
from tests.wallet_fixtures import USDC

HEADER_MAX_PX = 64  # one line: the name, the bell and the menu
# Pages whose tables fit their cards at both widths (others may still scroll inside theirs).
TABLES_FIT = {"positions"}


def _fits(page: Any, name: str, width: int) -> None:
    """At ``width``: no sideways scroll; saved as <name>-phone or <name>-desktop."""
    page.set_viewport_size({"width": width, "height": PHONE["height"] if width == PHONE["width"]
                            else DESKTOP["height"]})
    page.wait_for_timeout(100)  # a relayout, not a wait for the server
    wide = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
    assert wide[0] <= wide[1], f"{name}: {wide[0]} px wide at {wide[1]} px"
    # Nor inside its cards: a table wider than its card scrolls there (positions did).
    inner = page.evaluate("() => [...document.querySelectorAll('main .table-wrap')]"
                          ".filter(w => w.scrollWidth > w.clientWidth + 1)"
                          ".map(w => w.scrollWidth + ' px in ' + w.clientWidth + ' px')")
    assert not inner or name not in TABLES_FIT, f"{name} at {width} px: tables {inner}"
    # A title's buttons, wrapped under it on a phone, do not touch what follows them.
    gap = page.evaluate(
        "() => { const h = document.querySelector('main .heading'); if (!h) return null;"
        " let n = h.nextElementSibling; while (n && !n.getClientRects().length)"
        " n = n.nextElementSibling; return n ? n.getBoundingClientRect().top"
        " - h.lastElementChild.getBoundingClientRect().bottom : null; }")
    assert gap is None or gap >= 8, f"{name}: {gap} px under the title's buttons at {width} px"
    docs_screenshot(page, f"{name}-{'phone' if width == PHONE['width'] else 'desktop'}")


def _walk(page: Any, name: str, path: str, ready: str = "main") -> None:
    page.set_viewport_size(DESKTOP)
    page.goto(path)
    page.wait_for_selector(ready)
    page.wait_for_load_state("networkidle")
    _fits(page, name, DESKTOP["width"])
    _fits(page, name, PHONE["width"])
    if page.locator(".topbar #menu").count():
        header = page.evaluate("() => document.querySelector('.topbar')"
                               ".getBoundingClientRect().height")
        assert header <= HEADER_MAX_PX, f"{name}: the header is {header} px tall on a phone"


def _filled_order(user: User, venue_control: Any) -> str:
    """A market with a question and a position in each outcome (manual orders, filled:
    mergeable, so a row shows its widest actions); its slug."""
    slug = f"dash-shots-{secrets.token_hex(4)}"
    tokens = venue_control.add_market(
        slug, liquidity=True, fair_price="0.46", category="politics",
        question="Will the Federal Reserve cut interest rates in December?")["token_ids"]
    for token in tokens:
        quote = previews.create(user, token, "buy", "12", "market", None)
        placed = orders.place_order(user, token_id=token, side="buy", size="12",
                                    order_type="market", preview_id=quote["preview_id"])
        assert placed.status == "matched", placed.error
    return slug


def test_every_page_at_desktop_and_phone_width(page, inbox, job_prefix, accounts_venue, user):
    # The chain-backed sandbox: the wallet's balances are real, and so is the ticket's cash.
    venue_control = accounts_venue.control
    _walk(page, "login", "/dashboard/login")
    maker = wallets.maker(_onboarded(user))
    accounts_venue.chain.contracts.mint(accounts_venue.chain.contracts.pusd, maker, 250 * USDC)
    onboarding.refresh_balance(user)
    sign_in(page, inbox, user.email)
    slug = _filled_order(user, venue_control)
    config = _config_with_decisions(user)
    shared = sharing.share(user, config.id, show_results=True)["token"]
    whale = venue_control.call("POST", "/whales/tick", None, expect=201)["fills"][0]["proxyWallet"]
    for n in range(3):
        # as the engine's are (copy_notices): the market's question, the reason in words
        events.emit(user, "copy.skipped", f"shots-skip:{n}", amount=Decimal(20),
                    reason="price_deviation_exceeded",
                    reason_text=readable("price_deviation_exceeded"), market=LONG_SLUG,
                    market_title="Will the Fed cut rates by 50 basis points in December 2026?",
                    trader="whale", link="/dashboard/configs")

    pages = [("overview", "/dashboard", "#portfolio-value"),
             ("traders", "/dashboard/traders", "main table, main p"),
             ("trader", f"/dashboard/traders/{whale}", "#pnl-chart"),
             ("markets", "/dashboard/markets", "main"),
             ("market", f"/dashboard/markets/{slug}", "#cash [data-cash]"),
             ("configs", "/dashboard/configs", "main"),
             ("config", f"/dashboard/configs/{config.id}", "#decisions tr[data-decision]"),
             ("config-edit", f"/dashboard/configs/{config.id}/edit", "main form"),
             ("config-new", "/dashboard/configs/new", "main form"),
             ("shared-setup", f"/dashboard/shared/{shared}", "#shared-rules"),
             ("positions", "/dashboard/positions", "#live-positions table"),
             ("account", "/dashboard/account", "main"),
             ("wallet", "/dashboard/wallet", "[data-balance=usdc]"),
             ("keys", "/dashboard/keys", "main"),
             ("apps", "/dashboard/apps", "main"),
             ("notifications", "/dashboard/notifications", "main"),
             ("notification-settings", "/dashboard/notifications/settings", "main"),
             ("not-found", "/dashboard/no-such-page", "h1")]
    for name, path, ready in pages:
        _walk(page, name, path, ready)

    # The phone's menu opens over the page: every page, notifications and signing out.
    page.set_viewport_size(PHONE)
    page.click("#menu summary")
    menu = page.locator("#menu .menu-panel")
    menu.wait_for()
    for text in ("Overview", "Wallet", "Notifications", "Sign out", "End all sessions"):
        assert menu.get_by_text(text, exact=True).is_visible(), text
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
    docs_screenshot(page, "menu-phone")
    # A desktop keeps its pages in the bar; End all sessions is in the menu, not beside them.
    page.set_viewport_size(DESKTOP)
    page.click("#menu summary")
    assert page.locator(".topbar > nav a:has-text('Markets')").is_visible()
    assert not page.locator("button:has-text('End all sessions')").is_visible()
