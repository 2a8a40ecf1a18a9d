"""The wallet page in a real browser against anvil: deposit address and QR code, balances,
a withdrawal confirmed and followed until its hash shows (a real worker host runs the job)."""

from __future__ import annotations

import time

from chain.keys import generate_keypair
from chain.tokens import token_balance_base
from models import User
from models.wallet import Withdrawal
from services.wallets import wallets
from tests.api.test_sessions import confirmation_code
from tests.conftest import DEADLINE
from tests.dashboard.conftest import screenshot, sign_in
from tests.wallet_fixtures import ONE_MATIC, USDC, legacy_eoa_wallet


def test_a_new_users_wallet_page_shows_the_deposit_wallet(page, inbox, fund, wallet_chain):
    email = sign_in(page, inbox)
    page.goto("/dashboard/wallet")  # the first look creates the wallet: a deposit wallet
    wallet = wallets.for_user(User.get(User.email == email))
    shown = page.locator("#deposit-address").inner_text()
    assert shown == wallets.maker(wallet) == wallet.funder_address != wallet.address
    fund(shown, pusd=3 * USDC, matic_wei=0)
    page.reload()
    page.wait_for_selector("[data-balance=usdc]")
    assert page.locator("[data-balance=usdc]").inner_text() == "3.00"  # to the cent
    assert "Total (pUSD + USDC.e)" in page.locator(".balances").inner_text()  # not "USDC"


def test_deposit_balances_and_a_withdrawal_until_its_hash_appears(
        page, inbox, fund, worker_host, wallet_chain):
    email = sign_in(page, inbox)
    # An account that sends its own transactions and pays gas: a legacy plain EOA.
    wallet = legacy_eoa_wallet(User.get(User.email == email))
    fund(wallet.address, pusd=5 * USDC, matic_wei=ONE_MATIC)

    page.goto("/dashboard/wallet")
    assert page.locator("#deposit-address").inner_text() == wallet.address
    assert page.locator(".qr-wrap svg path").count() == 1
    page.wait_for_selector("[data-balance=usdc]")
    assert page.locator("[data-balance=usdc]").inner_text() == "5.00"
    assert page.locator("[data-balance=matic]").inner_text() == "1.00"  # as the others
    screenshot(page, "wallet")

    to = generate_keypair().address
    # A bad address is refused inline, with the API's code, before anything is confirmed.
    page.fill("input[name=to_address]", "0x1234")
    page.fill("input[name=amount]", "1.5")
    page.click("button:has-text('Review withdrawal')")
    alert = page.locator("#withdraw-errors .alert")
    alert.wait_for()
    assert alert.get_attribute("data-code") == "validation_failed"
    assert alert.locator("[data-field=to_address]").count() == 1
    page.fill("input[name=to_address]", to)

    page.fill("input[name=amount]", "1.5")
    page.click("button:has-text('Review withdrawal')")
    confirm = page.locator("#withdraw-confirm")
    confirm.wait_for()
    assert "Send 1.50 pUSD" in confirm.inner_text() and to in confirm.inner_text()
    # Moving money asks for a fresh code, emailed when the confirmation opened: it says where.
    assert email in confirm.locator("[data-code-where=mail]").inner_text()
    page.fill("input[name=step_up_code]", confirmation_code(inbox, email))
    page.click("button:has-text('Confirm withdrawal')")
    tx_hash = page.locator("[data-tx-hash]")
    tx_hash.wait_for(timeout=DEADLINE * 1000)
    # The result is followed right here: it points at no REST path, and it says the amount
    # once, to the cent (it said "12.500000 pUSD" in a line above "12.5 pUSD").
    step = page.locator("#withdraw-step").inner_text()
    assert "/api/" not in step
    assert step.count("Withdrawal of 1.50 pUSD") == 1 and "1.500000" not in step, step
    hash_text = tx_hash.get_attribute("data-tx-hash")
    assert hash_text.startswith("0x") and len(hash_text) == 66
    page.wait_for_selector(".progress[data-status=confirmed]", timeout=DEADLINE * 1000)
    # The balance card re-reads by itself once the withdrawal is confirmed (no reload).
    page.wait_for_selector("[data-balance=usdc]:text-is('3.50')")
    screenshot(page, "wallet-withdrawal")
    receipt = wallet_chain.web3().eth.wait_for_transaction_receipt(hash_text, timeout=DEADLINE)
    assert receipt["status"] == 1
    assert token_balance_base(wallet_chain.web3(), wallet_chain.contracts.pusd, to) == (
        3 * USDC // 2)

    # The chain's own checks answer at confirmation with the API's codes, inline.
    for amount, shown, code in (("100", "100.00", "insufficient_balance"),
                                ("1.0000001", "1.0000001", "validation_failed")):
        page.fill("input[name=amount]", amount)
        page.click("button:has-text('Review withdrawal')")
        # never rounded: what is confirmed is what would be sent (and is refused)
        page.wait_for_selector(f"#withdraw-confirm:has-text('Send {shown} pUSD')")
        page.click("button:has-text('Confirm withdrawal')")
        alert = page.locator("#withdraw-errors .alert")
        alert.wait_for()
        assert alert.get_attribute("data-code") == code


def test_a_confirmation_submitted_twice_sends_one_withdrawal(
        page, inbox, fund, worker_host, wallet_chain):
    email = sign_in(page, inbox)
    user = User.get(User.email == email)
    wallet = legacy_eoa_wallet(user)  # pays its own gas
    fund(wallet.address, pusd=5 * USDC, matic_wei=ONE_MATIC)
    page.goto("/dashboard/wallet")
    to = generate_keypair().address
    page.fill("input[name=to_address]", to)
    page.fill("input[name=amount]", "1")
    page.click("button:has-text('Review withdrawal')")
    form = page.locator("#withdraw-confirm form")
    form.wait_for()
    fields = {name: form.locator(f"input[name={name}]").get_attribute("value")
              for name in ("to_address", "amount", "token", "idempotency_key")}
    assert fields["idempotency_key"]
    fields["step_up_code"] = confirmation_code(inbox, email)  # moving money: a fresh code
    csrf = page.locator("meta[name=csrf-token]").get_attribute("content")
    # the form sent twice (a double click past the disabled button, a resubmitted page)
    answers = [page.request.post("/dashboard/wallet/withdraw", form=fields,
                                 headers={"X-CSRF-Token": csrf, "HX-Request": "true"})
               for _ in range(2)]
    assert [answer.status for answer in answers] == [200, 200]
    assert Withdrawal.select().where(Withdrawal.user == user.id).count() == 1
    [withdrawal] = Withdrawal.select().where(Withdrawal.user == user.id)
    assert all(str(withdrawal.id) in answer.text() for answer in answers)
    # a fresh confirmation is a fresh key: a second, deliberate withdrawal goes out
    page.click("button:has-text('Review withdrawal')")
    key = page.locator("#withdraw-confirm input[name=idempotency_key]")
    # The old confirmation stays on the page until htmx swaps the new one in: wait for it.
    deadline = time.monotonic() + DEADLINE
    while key.get_attribute("value") == fields["idempotency_key"]:
        assert time.monotonic() < deadline, "no fresh confirmation"
        page.wait_for_timeout(100)
