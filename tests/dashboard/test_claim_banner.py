"""Claiming from the positions page (issue 29, "Positions"): a resolved winning position
raises a claimable banner, its row offers a claim of its own, each asks for confirmation
first; the claim runs on the dev chain through the deposit wallet's relayer batch, and the
page follows it until the pUSD has arrived. In Chromium at desktop and phone width."""

from __future__ import annotations

import time

from web3 import Web3

from tests.chain_venue import run_queued_jobs
from tests.conftest import DEADLINE
from tests.dashboard.conftest import accessible_and_fits_a_phone, sign_in
from tests.services.wallets.test_relayer_claims_chain import holding_winners
from tests.wallet_fixtures import USDC

_ERC20 = [{"type": "function", "name": "balanceOf", "stateMutability": "view",
           "inputs": [{"name": "o", "type": "address"}],
           "outputs": [{"name": "", "type": "uint256"}]}]


def _pusd(cv, owner: str) -> int:
    dev = cv.chain.contracts
    token = dev.web3().eth.contract(address=dev.pusd, abi=_ERC20)
    return int(token.functions.balanceOf(Web3.to_checksum_address(owner)).call())


def test_the_banner_claims_resolved_winnings_after_a_confirmation(
        page, inbox, job_prefix, accounts_venue, user):
    cv = accounts_venue
    _wallet, maker, condition = holding_winners(cv, user, 6)  # 6 Yes shares; Yes won
    winner = str(condition.token_ids[0])
    sign_in(page, inbox, user.email)

    page.goto("/dashboard/positions")
    banner = page.locator("#claimable-banner")
    banner.wait_for()
    assert "1 resolved position can be claimed." in banner.inner_text()
    # Winnings to collect are news, not a fault: the banner is not painted as an error.
    error_red = page.evaluate("() => { const a = document.createElement('div');"
                              " a.className = 'alert'; document.body.append(a);"
                              " const c = getComputedStyle(a).color; a.remove(); return c; }")
    assert banner.evaluate("b => getComputedStyle(b).color") != error_red
    row = page.locator(f"#live-positions tr[data-token-id='{winner}']")
    assert "resolved" in row.inner_text()
    assert row.locator("button:has-text('Claim 6.00 pUSD')").count() == 1
    accessible_and_fits_a_phone(page, "positions-claimable")

    asked: list[str] = []
    page.on("dialog", lambda dialog: asked.append(dialog.message))  # the fixture accepts
    before = _pusd(cv, maker)
    banner.locator("button:has-text('Claim all')").click()
    # The request waits for the claim's job a while: run it here, as a worker would.
    deadline = time.monotonic() + DEADLINE
    while "claims.redeem" not in run_queued_jobs(only={"claims.redeem"}):
        assert time.monotonic() < deadline, "the claim was never queued"
        time.sleep(0.1)
    assert asked == ["Claim every resolved position? The winnings arrive as pUSD."]
    page.wait_for_selector("#claim-result [data-status=confirmed]", timeout=DEADLINE * 1000)
    assert "pays 6.00" in page.locator("#claim-result").inner_text()
    assert _pusd(cv, maker) - before == 6 * USDC
    # The list re-renders every 10 s, and the banner goes with the last claimable
    # position: the claim's result stays (it was inside the banner, and vanished).
    page.evaluate("htmx.ajax('GET', '/dashboard/positions/live', '#live-positions')")
    page.wait_for_selector("#claimable-banner", state="detached", timeout=DEADLINE * 1000)
    assert "pays 6.00" in page.locator("#claim-result").inner_text()
    assert "1 claim submitted. Expected payout: 6.00 pUSD." in (
        page.locator("#claim-result").inner_text())
    accessible_and_fits_a_phone(page, "positions-claimed")

    page.reload()  # nothing left to claim: no banner, and the row is gone
    page.wait_for_selector("#live-positions :is(table, p)")
    assert page.locator("#claimable-banner").count() == 0
    assert page.locator(f"#live-positions tr[data-token-id='{winner}']").count() == 0
