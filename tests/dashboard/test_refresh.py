"""Cards that refresh themselves after an action (issue 44, item 5): the order ticket's
"Your position" and cash after a manual order fills on the chain-backed sandbox, and after
an order held for the market's delay fills later, read again through the htmx events the
answers announce, without a reload. (The withdrawal's balance card: test_wallet.py.)"""

from __future__ import annotations

import re
import secrets
import time
from datetime import timedelta
from decimal import Decimal

from models import User
from models.trading import Order
from services.trading import order_reconcile
from services.wallets import onboarding, wallets
from tests.conftest import DEADLINE
from tests.dashboard.conftest import sign_in
from tests.services.wallets.test_relayer_claims_chain import _onboarded
from tests.trading_support import onboarded_trader
from tests.venue_lifecycle import delay_market
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


def test_an_order_waiting_out_the_markets_delay_updates_the_position_once_it_fills(
        page, inbox, venue_control):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    onboarded_trader(user, "200", venue_control)
    slug = f"dash-delayed-{secrets.token_hex(4)}"
    market = venue_control.add_market(slug, liquidity=True, fair_price="0.5",
                                      question=f"Will the delayed test {slug} pass?")
    delay_market(venue_control, market["condition_id"], 1)

    page.goto(f"/dashboard/markets/{slug}")
    page.evaluate("document.body.dataset.sameDocument = '1'")
    page.fill("#ticket input[name=size]", "10")
    page.click("#ticket button:has-text('Preview')")
    page.wait_for_selector("#order-preview")
    page.click("#order-preview button:has-text('Place order')")
    page.wait_for_selector("#order-placed[data-status=accepted]")  # held for the delay
    assert page.locator("#held").inner_text() == "None in this outcome."

    # The worker's sweep finds the match once the delay is over; the fragment following
    # the order sees it filled and announces it.
    order = Order.get(Order.user == user.id)
    deadline = time.monotonic() + DEADLINE
    while Order.get_by_id(order.id).status != "matched":
        assert time.monotonic() < deadline, Order.get_by_id(order.id).status
        order_reconcile.reconcile_pending(older_than=timedelta(0))
        time.sleep(0.2)
    page.wait_for_selector("#order-placed[data-status=filled]")
    page.wait_for_selector("#held:has-text('10.00 Yes shares')")
    assert page.evaluate("document.body.dataset.sameDocument") == "1"
