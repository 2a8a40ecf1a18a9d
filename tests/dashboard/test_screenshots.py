"""Every dashboard page, walked once with realistic rows, at desktop width and at 390 by 844
(issue 44, item 8): nothing scrolls sideways at either width, the phone's header stays
compact (its pages and signing out are in the menu), and each page is saved as
docs/screenshots/<page>-desktop.png and <page>-phone.png for the docs (and for a person
to look at)."""

from __future__ import annotations

import re
import secrets
from decimal import Decimal
from pathlib import Path
from typing import Any

from models import User
from models.market import Market
from services.copying.configs import sharing
from services.copying.copy_notices import readable
from services.notifications import events
from services.trading import orders, previews
from services.wallets import onboarding, wallets
from tests.dashboard.conftest import (
    DESKTOP,
    DOCS_SCREENSHOTS,
    PHONE,
    docs_screenshot,
    docs_shots,
    sign_in,
)
from tests.dashboard.test_phone_pages import LONG_SLUG, _config_with_decisions
from tests.services.wallets.test_relayer_claims_chain import _onboarded
from tests.wallet_fixtures import USDC

HEADER_MAX_PX = 64  # one line: the name, the bell and the menu


# A count of one with its noun in the plural ("1 trades" on a trader's profile).
ONE_PLURAL = re.compile(r"(?<![\d.,])1 (trades|copies|fills|positions|markets|orders)\b")


def _walk(page: Any, name: str, path: str, ready: str = "main") -> None:
    page.set_viewport_size(DESKTOP)
    page.goto(path)
    page.wait_for_selector(ready)
    page.wait_for_load_state("networkidle")
    wrong = ONE_PLURAL.findall(page.locator("main").inner_text())
    assert not wrong, f"{name}: {wrong}"
    docs_shots(page, name)
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
    # its decisions' market, as the catalogue holds it once synced: the pages name it by
    # its question (the made-up slug alone drew the docs' picture with a slug in each row)
    Market.get_or_create(slug=LONG_SLUG, defaults={
        "venue_id": f"shots-{secrets.token_hex(4)}", "condition_id": "0x" + "ab" * 32,
        "title": "Will the Fed cut rates by 50 basis points in December 2026?"})
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
        if name == "config":
            decisions = page.locator("#decisions").inner_text()
            assert "Will the Fed cut rates" in decisions and LONG_SLUG not in decisions
            # a copy's execution reads as one phrase, not three words spread over the row
            execution = page.locator("#decisions .execution").first.bounding_box()
            assert execution["width"] < 200, execution

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


# Each page template's pictures: its name in docs/screenshots where the file's name differs.
PICTURE_NAMES = {"error": "not-found", "shared": "shared-setup"}
# Pictures of a page in a particular state, beside its plain pair.
STATES = {"traders-screened", "menu"}
TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "dashboard"


def test_every_page_has_its_pair_of_pictures_and_no_picture_is_stray():
    """Every page template (not a fragment, ``_*``, nor the layout) has a desktop and a
    phone picture, each written by a screenshot test; no other file lies there for the docs
    to show, stale (config.png and overview.png were from an earlier walk)."""
    pages = {PICTURE_NAMES.get(t.stem, t.stem.replace("_", "-"))
             for t in TEMPLATES.glob("*.html") if not t.name.startswith("_")} - {"base"}
    shown = {p.name for p in DOCS_SCREENSHOTS.glob("*.png")}
    missing = {f"{page}-{width}.png" for page in pages for width in ("desktop", "phone")} - shown
    assert not missing, f"pages without their pictures: {sorted(missing)}"
    stray = {name for name in shown
             if name.rsplit("-", 1)[0] not in pages | STATES
             or not name.endswith(("-desktop.png", "-phone.png"))}
    assert not stray, f"pictures no test writes: {sorted(stray)}"
