"""The copy engine copies for an account connected with a session key (issue 16): against
the strict sandbox whose relayer runs the deposit wallet on anvil, a target's fill is copied
as a type-3 order in the session-signer envelope, and it fills; its settlement moves the
copy's pUSD (fee included) and tokens on chain, where the wallet page, readiness and the
venue all read the same (issue 29)."""

from __future__ import annotations

import secrets
from decimal import Decimal

from models import User
from services.wallets import readiness, trading_accounts, wallets
from tests.api.test_onchain_settlement import _shares_on_chain
from tests.services.trading.test_session_key_trading import _onboard, _owned_wallet
from tests.worker.copy_engine.conftest import copy_one_fill


def test_a_session_key_account_copies_a_fill_live(accounts_venue, make_config, run_engines,
                                                  target, bound_db) -> None:
    cv = accounts_venue
    _owner, wallet, session = _owned_wallet(cv)
    user = User.create(email=f"{secrets.token_hex(6)}@example.com", tier="elite")
    connected = trading_accounts.connect(user, wallet_address=wallet,
                                         private_key=session.private_key)
    assert connected.session_signer is True
    assert _onboard(user).status == "ready"
    token = cv.control.add_market(f"skc-{secrets.token_hex(4)}", liquidity=True,
                                  fair_price="0.5", category="politics",
                                  fee_rate="0.04")["token_ids"][0]

    copy_one_fill(run_engines, cv.control, make_config(user, target), target, token)
    [sent] = [o["body"]["order"] for o in cv.control.received_orders()
              if o["body"]["order"]["maker"] == wallet]
    assert (sent["signer"], sent["signatureType"]) == (wallet, 3)
    assert sent["signature"].endswith("6492" * 16)  # signed by the session key

    [fill] = [f for f in cv.control.get("/data/activity", user=wallet) if f["type"] == "TRADE"]
    size, price = Decimal(fill["size"]), Decimal(fill["price"])
    fee = (size * Decimal("0.04") * price * (1 - price)).quantize(Decimal("0.00001"))
    paid = Decimal(fill["usdcSize"]) + fee  # the taker fee comes out of the wallet too
    assert fee > 0
    left = Decimal(100) - paid
    assert wallets.balances(user)["pusd"] == left  # the chain, as the wallet page
    assert readiness.readiness(user)["balance_usdc"] == left
    assert Decimal(cv.control.balances(wallet)["pusd"]) == left
    assert _shares_on_chain(cv, wallet, token) == Decimal(fill["size"])
