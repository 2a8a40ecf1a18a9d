"""Money out of a connected grandfathered proxy (type 1) or Safe (type 2): withdrawals and
claims leave the wallet (where the money is, not its owner EOA) as one relayer ``PROXY`` /
``SAFE`` transaction signed by the owner, with the deposit wallet's exactly-once record
(services/wallets/wallet_batches.py): a stored transaction whose answer was lost is resent as the
same bytes (it has no deadline, so it is never signed afresh), and a crash between submit
and record never sends twice."""

from __future__ import annotations

import json
import secrets
import time
from decimal import Decimal
from typing import Any

import pytest
from eth_account import Account

from models import User
from models.wallet import Claim, Withdrawal
from services.wallets import claims, onboarding, trading_accounts, wallet_batches, withdrawals
from tests.services.test_relayer_withdrawals import _crash_once
from tests.trading_support import Trader
from venue.accounts import proxy_wallet_address, safe_wallet_address

KIND = {1: "PROXY", 2: "SAFE"}


def _legacy_trader(venue_control: Any, signature_type: int, funds: str) -> tuple[Trader, str]:
    """A connected proxy or Safe holding ``funds`` pUSD, onboarded (its approvals sent
    through the relayer): (trader, the wallet)."""
    venue_control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    owner = Account.create()
    derive = proxy_wallet_address if signature_type == 1 else safe_wallet_address
    wallet = derive(owner.address, trading_accounts.contracts())
    venue_control.call("POST", "/legacy-wallets", {"wallet": wallet, "owner": owner.address,
                                                   "signature_type": signature_type},
                       expect=200)
    user = User.create(email=f"{secrets.token_hex(6)}@example.com", tier="elite")
    connected = trading_accounts.connect(user, wallet_address=wallet,
                                         private_key=owner.key.hex())
    row = onboarding.record(connected)
    assert onboarding.run(row.id) == "ready", onboarding.status(user)["error"]
    venue_control.fund(wallet, funds)
    return Trader(user=user, wallet=connected), wallet


@pytest.mark.parametrize("signature_type", [1, 2])
def test_a_withdrawal_leaves_the_proxy_or_safe_through_the_relayer_once(
        venue_control, bound_db, signature_type) -> None:
    trader, wallet = _legacy_trader(venue_control, signature_type, "100")
    dest = "0x" + secrets.token_hex(20)
    row = withdrawals.request(trader.user, dest, Decimal("30"), "usdc")
    assert withdrawals.send(row.id) == "confirmed"
    assert withdrawals.send(row.id) == "confirmed"  # again: nothing is sent twice
    done = Withdrawal.get_by_id(row.id)
    payload = json.loads(done.relayer_payload)
    assert (payload["type"], payload["proxyWallet"]) == (KIND[signature_type], wallet)
    assert done.relayer_transaction_id and done.relayer_deadline is None
    assert venue_control.balances(wallet)["pusd"] == "70"
    assert venue_control.balances(dest)["pusd"] == "30"


def _die(*_args: Any) -> None:
    raise SystemExit("killed after the relayer answered")


@pytest.mark.parametrize("signature_type", [1, 2])
def test_a_lost_answer_is_resent_as_the_same_bytes_and_a_crash_after_submit_never_sends_twice(
        venue_control, bound_db, monkeypatch, signature_type) -> None:
    trader, wallet = _legacy_trader(venue_control, signature_type, "40")
    row = withdrawals.request(trader.user, "0x" + "ab" * 20, Decimal("15"), "usdc")
    real_store = wallet_batches.BatchRow.store_signed
    signed: list[Any] = []

    def store_then_die(self, payload, wallet, owner) -> None:
        real_store(self, payload, wallet, owner)
        signed.append(payload)
        raise SystemExit("killed after storing, before submitting")

    _crash_once(monkeypatch, row, "store_signed", store_then_die)
    assert withdrawals.send_by_relayer(row.id, max_polls=3) == "confirmed"
    # resent as stored, never re-signed
    assert json.loads(Withdrawal.get_by_id(row.id).relayer_payload) == signed[0]
    assert venue_control.balances(wallet)["pusd"] == "25"

    second = withdrawals.request(trader.user, "0x" + "ab" * 20, Decimal("10"), "usdc")
    _crash_once(monkeypatch, second, "store_id", _die)
    # It ran, but its id was never recorded: the wallet's nonce moved past it, and the owner
    # of a connected proxy or Safe may sign elsewhere too: ambiguous, never sent again.
    deadline = time.monotonic() + 15
    while (status := withdrawals.send_by_relayer(second.id, max_polls=3)) == "signed" \
            and time.monotonic() < deadline:
        time.sleep(0.3)
    assert status == "ambiguous"
    assert "perhaps by this batch" in Withdrawal.get_by_id(second.id).error
    assert withdrawals.send_by_relayer(second.id, max_polls=3) == "ambiguous"
    assert venue_control.balances(wallet)["pusd"] == "15"


def test_a_proxys_winnings_are_claimed_through_the_relayer(
        venue_control, bound_db, make_sandbox_market) -> None:
    trader, wallet = _legacy_trader(venue_control, 1, "10")
    market = make_sandbox_market()
    venue_control.grant(wallet, market.yes, "25")
    venue_control.call("POST", f"/markets/{market.condition_id}/resolve", {"winner": 0},
                       expect=200)
    [row] = claims.request(trader.user)
    assert claims.redeem(row.id) == "confirmed"
    done = Claim.get_by_id(row.id)
    assert json.loads(done.relayer_payload)["type"] == "PROXY"
    assert venue_control.balances(wallet)["pusd"] == "35"
    assert claims.request(trader.user) == []
