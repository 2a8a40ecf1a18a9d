"""Cards that refresh themselves after an action (issue 44, item 5): the order ticket's
"Your position" and cash after a manual order fills on the chain-backed sandbox, read again
through the htmx events the order's answer announces, without a reload."""

from __future__ import annotations

import re
import secrets
from decimal import Decimal

from services.wallets import onboarding, wallets
from tests.dashboard.conftest import sign_in
from tests.services.test_relayer_claims_chain import _onboarded
from tests.wallet_fixtures import USDC


def test_a_fill_updates_the_tickets_position_and_cash_without_a_reload(
        page, inbox, job_prefix, accounts_venue, user):
    cv = accounts_venue
    maker = wallets.maker(_onboarded(user))
    cv.chain.contracts.mint(cv.chain.contracts.pusd, maker, 100 * USDC)
    onboarding.refresh_balance(user)  # the CLOB sees the deposit
    slug = f"dash-refresh-{secrets.token_hex(4)}"
    cv.control.add_market(slug, liquidity=True, fair_price="0.5",
                          question=f"Will the refresh test {slug} pass?")
    sign_in(page, inbox, user.email)

    page.goto(f"/dashboard/markets/{slug}")
    cash = page.locator("#cash [data-cash]")
    cash.wait_for()
    assert cash.inner_text() == "100.00 pUSD"
    assert page.locator("#held").inner_text() == "None in this outcome."
    # A reload would make a new document: this marker would be gone.
    page.evaluate("document.body.dataset.sameDocument = '1'")

    page.fill("#ticket input[name=size]", "10")
    page.click("#ticket button:has-text('Preview')")
    page.wait_for_selector("#order-preview")
    page.click("#order-preview button:has-text('Place order')")
    page.wait_for_selector("#order-placed[data-status=filled]")

    held = page.locator("#held:has-text('10.00 Yes shares')")
    held.wait_for()
    page.wait_for_function("() => !document.querySelector('#cash [data-cash]')"
                           ".textContent.startsWith('100.00')")
    spent = re.fullmatch(r"(\d+\.\d{2}) pUSD", cash.inner_text())
    assert spent and Decimal(90) <= Decimal(spent.group(1)) < 100, cash.inner_text()
    assert page.evaluate("document.body.dataset.sameDocument") == "1"
