"""Withdrawals from a deposit wallet on the dev chain (issue 16: money out needs no POL): the
sandbox relayer runs the wallet on anvil, so the product's withdrawal job sends its WALLET
batch and the wallet contract itself transfers pUSD or USDC.e to the destination."""

from __future__ import annotations

import json
import secrets
from decimal import Decimal

import pytest
from web3 import Web3

from models.wallet import Withdrawal
from services.platform import errors
from services.wallets import withdrawals
from tests.chain_venue import ChainVenue
from tests.services.wallets.test_relayer_claims_chain import _BALANCE_OF, _no_pol, _onboarded
from tests.wallet_fixtures import USDC


def _held(cv: ChainVenue, token: str, address: str) -> int:
    contract = cv.chain.contracts.web3().eth.contract(address=token, abi=_BALANCE_OF)
    return int(contract.functions.balanceOf(address).call())


def test_a_deposit_wallet_withdraws_pusd_and_usdce_on_chain_without_pol(accounts_venue,
                                                                        user) -> None:
    cv, dev = accounts_venue, accounts_venue.chain.contracts
    wallet = _onboarded(user)
    maker = wallet.funder_address
    dev.mint(dev.pusd, maker, 50 * USDC)
    dev.mint(dev.usdce, maker, 5 * USDC)
    dest = Web3.to_checksum_address("0x" + secrets.token_hex(20))

    pusd = withdrawals.request(user, dest, Decimal("30"), "usdc")
    assert withdrawals.send(pusd.id) == "confirmed"
    assert withdrawals.send(pusd.id) == "confirmed"  # again: nothing leaves twice
    assert (_held(cv, dev.pusd, dest), _held(cv, dev.pusd, maker)) == (30 * USDC, 20 * USDC)
    assert Withdrawal.get_by_id(pusd.id).relayer_transaction_id

    usdce = withdrawals.request(user, dest, Decimal("5"), "usdc_e")
    assert withdrawals.send(usdce.id) == "confirmed"
    assert (_held(cv, dev.usdce, dest), _held(cv, dev.usdce, maker)) == (5 * USDC, 0)
    _no_pol(cv, wallet)  # neither the wallet nor its owner ever held POL


def test_matic_sent_to_a_deposit_wallet_is_withdrawn_by_a_call_carrying_value(
        accounts_venue, user) -> None:
    """MATIC a user sent to the deposit address by mistake is not stuck: the wallet's batch
    sends it out as a call with value, and the relayer pays the gas (no POL at the owner)."""
    dev = accounts_venue.chain.contracts
    wallet = _onboarded(user)
    maker = wallet.funder_address
    dev.fund_native(maker, 5 * 10**18)
    dest = Web3.to_checksum_address("0x" + secrets.token_hex(20))

    with pytest.raises(errors.InsufficientBalance):
        withdrawals.request(user, dest, Decimal("6"), "matic")
    row = withdrawals.request(user, dest, Decimal("3.5"), "matic")
    assert (row.token, row.token_address) == ("matic", None)
    with pytest.raises(errors.InsufficientBalance):  # the open one holds 3.5 of the 5
        withdrawals.request(user, dest, Decimal("2"), "matic")
    assert withdrawals.send(row.id) == "confirmed"
    assert withdrawals.send(row.id) == "confirmed"  # again: nothing leaves twice
    assert dev.native_balance_wei(dest) == 35 * 10**17
    assert dev.native_balance_wei(maker) == 15 * 10**17
    [call] = json.loads(Withdrawal.get_by_id(row.id).relayer_payload)[
        "depositWalletParams"]["calls"]
    assert (call["target"], call["value"], call["data"]) == (dest, str(35 * 10**17), "0x")
    assert dev.native_balance_wei(wallet.address) == 0  # the owner key paid no gas
