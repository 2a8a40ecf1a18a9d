"""The account page offers USDC.e waiting at the deposit wallet with a button that wraps it
and follows the wrap to done; a relayer failure shows the relayer's reason and a retry
(the real worker, the sandbox relayer running the deposit wallet on anvil)."""

from __future__ import annotations

from typing import Any

import pytest

from chain.tokens import token_balance_base
from models import User
from models.wallet import CollateralWrap
from services.wallets import wallets
from tests.chain_venue import chain_venue  # noqa: F401 - this test's chain-backed venue
from tests.conftest import DEADLINE
from tests.dashboard.conftest import screenshot, sign_in
from tests.wallet_fixtures import USDC


@pytest.fixture
def venue_control(chain_venue: Any) -> Any:  # noqa: F811
    return chain_venue


def test_usdc_e_waiting_is_wrapped_from_the_button_and_a_failure_can_be_retried(
        page, inbox, chain_venue, worker_host, chain) -> None:  # noqa: F811
    dev = chain.contracts
    email = sign_in(page, inbox)
    page.goto("/dashboard/account")  # the sign-in started the set-up; the page follows it
    page.wait_for_selector("#onboarding[data-status=ready]", timeout=DEADLINE * 1000)
    maker = wallets.for_user(User.get(User.email == email)).funder_address
    # Below AUTO_WRAP_MIN_USDC_E: the watcher leaves it, the page offers it.
    dev.mint(dev.usdce, maker, USDC // 2)
    page.goto("/dashboard/account")
    offered = page.locator("#wrap [data-usdc-e]")
    offered.wait_for()
    assert offered.get_attribute("data-usdc-e") == "0.5"
    waiting = page.locator("#readiness li[data-code=usdce_to_wrap]")
    waiting.wait_for()
    assert "0.5 USDC.e" in waiting.inner_text() and "account page" in waiting.inner_text()
    page.click("#wrap button:has-text('Wrap 0.5 USDC.e into pUSD')")
    page.wait_for_selector("#wrap[data-status=confirmed]", timeout=DEADLINE * 1000)
    assert page.locator("#wrap [data-usdc-e]").count() == 0  # nothing left to wrap
    waiting.wait_for(state="detached")  # the readiness card re-read once the wrap was done
    assert token_balance_base(chain.web3(), dev.pusd, maker) == USDC // 2
    screenshot(page, "account-wrap-confirmed")

    dev.mint(dev.usdce, maker, USDC // 4)
    chain_venue.call("POST", "/relayer", {"fail_next": {
        "state": "FAILED", "message": "onramp paused"}}, expect=200)
    page.goto("/dashboard/account")
    page.click("#wrap button:has-text('Wrap 0.25 USDC.e into pUSD')")
    page.wait_for_selector("#wrap[data-status=failed]", timeout=DEADLINE * 1000)
    assert "onramp paused" in page.locator("#wrap [data-wrap-error]").inner_text()
    page.click("#wrap button:has-text('Retry: wrap 0.25 USDC.e into pUSD')")
    page.wait_for_selector("#wrap[data-status=confirmed]", timeout=DEADLINE * 1000)
    assert [w.status for w in CollateralWrap.select().order_by(CollateralWrap.created_at)] == [
        "confirmed", "failed", "confirmed"]
    assert token_balance_base(chain.web3(), dev.pusd, maker) == USDC // 2 + USDC // 4
