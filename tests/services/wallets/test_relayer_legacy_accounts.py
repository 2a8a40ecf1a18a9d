"""Money out of a connected grandfathered proxy (type 1) or Safe (type 2): withdrawals and
claims leave the wallet (where the money is, not its owner EOA) as one relayer ``PROXY`` /
``SAFE`` transaction signed by the owner, with the deposit wallet's exactly-once record
(services/wallets/wallet_batches.py): a stored transaction whose answer was lost is resent as the
same bytes (it has no deadline, so it is never signed afresh), a crash between submit and
record never sends twice (the relayer's list of our transactions names it), and one whose
nonce was used elsewhere stays ambiguous."""

from __future__ import annotations

import json
import secrets
from decimal import Decimal
from typing import Any

import pytest
from eth_account import Account

from models import User
from models.wallet import Claim, TradingWallet, Withdrawal
from services.platform import venues
from services.wallets import (
    claims,
    onboarding,
    trading_accounts,
    wallet_batches,
    wallets,
    withdrawals,
)
from tests.services.wallets.test_relayer_withdrawals import _crash_once
from tests.trading_support import Trader
from venue import relayer
from venue.accounts import proxy_wallet_address, safe_wallet_address
from venue.accounts.wallet_calls import transfer_call
from venue.models import RelayerApiKey
from venue.signing import OrderKey

KIND = {1: "PROXY", 2: "SAFE"}


def legacy_account(venue_control: Any, signature_type: int) -> tuple[TradingWallet, str]:
    """A proxy or Safe polymarket.com made, connected (not onboarded yet): (the account,
    its owner); the sandbox relayer steps every 0 s."""
    venue_control.call("POST", "/relayer", {"step_seconds": 0}, expect=200)
    owner = Account.create()
    derive = proxy_wallet_address if signature_type == 1 else safe_wallet_address
    wallet = derive(owner.address, trading_accounts.contracts())
    venue_control.call("POST", "/legacy-wallets", {"wallet": wallet, "owner": owner.address,
                                                   "signature_type": signature_type},
                       expect=200)
    user = User.create(email=f"{secrets.token_hex(6)}@example.com", tier="elite")
    return trading_accounts.connect(user, wallet_address=wallet,
                                    private_key=owner.key.hex()), owner.address


def _legacy_trader(venue_control: Any, signature_type: int, funds: str) -> tuple[Trader, str]:
    """A connected proxy or Safe holding ``funds`` pUSD, onboarded (its approvals sent
    through the relayer): (trader, the wallet)."""
    connected, _owner = legacy_account(venue_control, signature_type)
    user, wallet = connected.user, wallets.maker(connected)
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
    # It ran, but its id was never recorded: the relayer's list of our transactions shows
    # the stored signature, so the next run follows that transaction to its end, unsent.
    assert withdrawals.send_by_relayer(second.id, max_polls=3) == "confirmed"
    done = Withdrawal.get_by_id(second.id)
    assert done.relayer_transaction_id and done.relayer_transaction_hash
    assert withdrawals.send_by_relayer(second.id, max_polls=3) == "confirmed"
    assert venue_control.balances(wallet)["pusd"] == "15"


@pytest.mark.parametrize("signature_type", [1, 2])
def test_a_stored_transaction_whose_nonce_another_key_used_stays_ambiguous(
        venue_control, bound_db, monkeypatch, signature_type) -> None:
    """The unprovable case: the stored transaction was never taken, and the owner signed
    another with its nonce elsewhere (polymarket.com, its own relayer key): the relayer's
    list of ours does not show it, the nonce moved, nothing says which ran. Ambiguous, and
    never sent again."""
    trader, wallet = _legacy_trader(venue_control, signature_type, "40")
    row = withdrawals.request(trader.user, "0x" + "cd" * 20, Decimal("10"), "usdc")
    monkeypatch.setattr(relayer, "submit_with_retry", _die)
    with pytest.raises(SystemExit):  # stored, then died before sending
        withdrawals.send_by_relayer(row.id, max_polls=3)
    monkeypatch.undo()
    stored = json.loads(Withdrawal.get_by_id(row.id).relayer_payload)

    owner = OrderKey(wallets.signer(trader.wallet))
    key = venue_control.call("POST", "/relayer", {"relayer_key_for": owner.address},
                             expect=200)["relayer_key"]
    elsewhere = RelayerApiKey(key=key, address=owner.address)
    token = wallets.token_addresses()["usdc"]
    other = relayer.run_steps(relayer.legacy_batch(
        elsewhere, owner, signature_type=signature_type,
        contracts=trading_accounts.contracts(), wallet=wallet,
        calls=[transfer_call(token, "0x" + "ef" * 20, 1_000_000)]), venues.client().transport.run)
    assert relayer.run_steps(relayer.await_final(other.transaction_id, elsewhere),
                             venues.client().transport.run).state == "STATE_CONFIRMED"

    assert withdrawals.send_by_relayer(row.id, max_polls=3) == "ambiguous"
    assert "perhaps by this batch" in Withdrawal.get_by_id(row.id).error
    assert withdrawals.send_by_relayer(row.id, max_polls=3) == "ambiguous"
    assert json.loads(Withdrawal.get_by_id(row.id).relayer_payload) == stored  # not re-signed
    assert venue_control.balances(wallet)["pusd"] == "39"  # only the other transaction ran
    assert venue_control.balances("0x" + "cd" * 20)["pusd"] == "0"


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
